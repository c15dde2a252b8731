import { loader, parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** A loader that loads nothing: a chart is drawn from its inline data, never from a file or URL. */
function offlineLoader() {
  const refuse = () => Promise.reject(new Error('charts load no external data'));
  const base = loader();
  return Object.assign(base, { load: refuse, sanitize: refuse, http: refuse, file: refuse });
}

/** Renders a Vega-Lite specification to SVG text on the server (no canvas, no network). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const vega = compile(spec).spec;
  const view = new View(parse(vega), { renderer: 'none', loader: offlineLoader() as never });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
