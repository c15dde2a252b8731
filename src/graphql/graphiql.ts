import { gzipSync } from 'node:zlib';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';

const FIRST_QUERY = `# Put your API key in the Headers tab below:
#   { "Authorization": "Bearer rql_…" }
query FirstLook {
  viewer { serverAdmin role project { name } }
  projects(first: 5) {
    totalCount
    nodes {
      id
      name
      useCases(first: 10) {
        nodes {
          name
          language
          variables { key type options }
          datasets(first: 5) { nodes { name reportCount annotators { name isReference } } }
        }
      }
    }
  }
}
`;

let page: { html: string; gzipped: Buffer } | undefined;

/** GraphiQL from our own server (no CDN), with a headers editor for the Authorization header. */
export function graphiqlPage(): { html: string; gzipped: Buffer } {
  if (!page) {
    const html = renderGraphiQL({
      title: 'ReportQL',
      endpoint: '/graphql',
      defaultQuery: FIRST_QUERY,
      headers: JSON.stringify({ Authorization: 'Bearer <your API key>' }, null, 2),
      shouldPersistHeaders: true,
      subscriptionsProtocol: 'WS',
    } as Parameters<typeof renderGraphiQL>[0]);
    page = { html, gzipped: gzipSync(html) };
  }
  return page;
}
