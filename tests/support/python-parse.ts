import { execFileSync } from 'node:child_process';

/**
 * What Python's standard library reads from a download: `csv.DictReader` rows (every cell a
 * string, as Python sees it) or `json.loads`. The body goes through stdin; the parsed value
 * comes back as JSON.
 */
export function parseWithPython(body: string, format: 'csv' | 'json'): any {
  const script =
    format === 'csv'
      ? 'import csv,io,json,sys; data=sys.stdin.buffer.read().decode("utf-8"); r=csv.DictReader(io.StringIO(data, newline=""), strict=True); rows=list(r); json.dump({"header": r.fieldnames, "rows": rows}, sys.stdout)'
      : 'import json,sys; json.dump(json.loads(sys.stdin.buffer.read().decode("utf-8")), sys.stdout)';
  const out = execFileSync('python3', ['-c', script], { input: body, maxBuffer: 256 * 1024 * 1024 });
  return JSON.parse(out.toString('utf8'));
}
