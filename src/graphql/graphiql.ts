import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { EXAMPLE_IDS_QUERY, exampleVariables, GRAPHIQL_EXAMPLES, pickExampleIds } from './graphiql-examples';

/** Where the page keeps the API key: one value for every GraphiQL tab and browser tab of the origin. */
export const GRAPHIQL_KEY_STORAGE = 'reportql:authorization';
/** Response header carrying the schema's hash; GraphiQL re-fetches the schema when it changes. */
export const SCHEMA_HASH_HEADER = 'x-reportql-schema';

const WELCOME = `# Welcome to ReportQL.
#
# 1. Click "Set API key" above and paste the key the server printed at its
#    first start (rql_…). It is kept in this browser and used by every tab; a tab's own
#    Headers ({"Authorization": "Bearer …"}) take precedence.
# 2. Run this query (▶ or Ctrl-Enter), or open an example from the Examples menu:
#    the example opens in a new GraphiQL tab with its variables filled from your data.
#
# Examples, also as links:
__EXAMPLE_LINKS__
`;

/**
 * Runs in the browser before GraphiQL: keeps the API key in localStorage and adds it to every
 * request of a tab that has no key of its own (HTTP and graphql-ws), sends nothing while no key
 * is known (no 401s), forgets a key the server refuses, re-fetches the schema when the key or the
 * server's schema hash changes, and opens examples with their variables filled in.
 */
const PAGE_SCRIPT = String.raw`(function () {
  'use strict';
  var STORAGE_KEY = __STORAGE_KEY__;
  var SCHEMA_HEADER = __SCHEMA_HEADER__;
  var ENDPOINT = '/graphql';
  var EXAMPLES = __EXAMPLES__;
  var IDS_QUERY = __IDS_QUERY__;
  var WELCOME = __WELCOME__;
  var pickExampleIds = __PICK_IDS__;
  var exampleVariables = __EXAMPLE_VARIABLES__;
  var realFetch = window.fetch.bind(window);
  var lastSchema = null;
  // Whether the result pane shows the answer sent while no key was known: setting a key clears it.
  var showsNoKeyAnswer = false;

  function readKey() {
    try { return window.localStorage.getItem(STORAGE_KEY) || ''; } catch (e) { return ''; }
  }
  function isRealKey(value) {
    return typeof value === 'string' && /^bearer\s+[^\s<>\u2026]{8,}$/i.test(value.trim());
  }
  function normalise(value) {
    var v = String(value || '').trim();
    if (!v) return '';
    return /^bearer\s/i.test(v) ? v.replace(/^bearer\s+/i, 'Bearer ') : 'Bearer ' + v;
  }
  function keyLabel() {
    var key = readKey();
    return key ? 'API key \u2713 ' + key.slice(7, 15) + '\u2026' : 'Set API key';
  }
  function showKey() {
    var button = document.getElementById('reportql-key');
    if (button) button.textContent = keyLabel();
  }
  function refetchSchema() {
    window.dispatchEvent(new KeyboardEvent('keydown', { key: 'R', ctrlKey: true, shiftKey: true }));
  }
  function setKey(value, refresh) {
    var v = normalise(value);
    var before = readKey();
    try {
      if (v) window.localStorage.setItem(STORAGE_KEY, v); else window.localStorage.removeItem(STORAGE_KEY);
    } catch (e) { /* storage disabled: the key lasts for this page only */ }
    showKey();
    if (v && showsNoKeyAnswer) {
      showsNoKeyAnswer = false;
      setEditor('response', '');
    }
    if (refresh && v && v !== before) refetchSchema();
  }
  function ownEndpoint(url) {
    try {
      var u = new URL(String(url).replace(/^ws/, 'http'), window.location.href);
      return u.origin === window.location.origin && u.pathname === ENDPOINT;
    } catch (e) { return false; }
  }
  function noKeyAnswer() {
    var body = { errors: [{ message: 'No API key yet: click "Set API key" at the top and paste your key (rql_…); it is kept in this browser for every tab.', extensions: { code: 'UNAUTHENTICATED' } }] };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  }

  window.fetch = function (input, init) {
    var url = typeof input === 'string' || input instanceof URL ? String(input) : input && input.url;
    if (!ownEndpoint(url)) return realFetch(input, init);
    var headers = new Headers((init && init.headers) || (typeof Request !== 'undefined' && input instanceof Request ? input.headers : undefined));
    var given = headers.get('authorization');
    var used;
    if (isRealKey(given)) {
      used = normalise(given);
      if (used !== readKey()) setKey(used, true);
    } else {
      used = readKey();
      if (!used) {
        showsNoKeyAnswer = true;
        return Promise.resolve(noKeyAnswer());
      }
      headers.set('authorization', used);
    }
    showsNoKeyAnswer = false;
    return realFetch(input, Object.assign({}, init, { headers: headers })).then(function (response) {
      if (response.status === 401 && used === readKey()) setKey('', false);
      var schema = response.headers.get(SCHEMA_HEADER);
      if (schema) {
        if (lastSchema && schema !== lastSchema) refetchSchema();
        lastSchema = schema;
      }
      return response;
    });
  };

  if (window.WebSocket) {
    var send = window.WebSocket.prototype.send;
    window.WebSocket.prototype.send = function (data) {
      if (typeof data === 'string' && ownEndpoint(this.url)) {
        try {
          var message = JSON.parse(data);
          if (message && message.type === 'subscribe' && message.payload) {
            var extensions = message.payload.extensions = message.payload.extensions || {};
            var headers = extensions.headers = extensions.headers || {};
            var given = headers.Authorization || headers.authorization;
            if (isRealKey(given)) {
              if (normalise(given) !== readKey()) setKey(given, true);
            } else if (readKey()) {
              delete headers.authorization;
              headers.Authorization = readKey();
              data = JSON.stringify(message);
            }
          }
        } catch (e) { /* not JSON: sent as it is */ }
      }
      return send.call(this, data);
    };
  }

  window.addEventListener('storage', function (event) {
    if (event.key !== STORAGE_KEY) return;
    showKey();
    if (event.newValue) refetchSchema();
  });
  document.addEventListener('click', function (event) {
    var target = event.target;
    if (!target || !target.closest || !target.closest('#reportql-key')) return;
    var value = window.prompt('API key for every GraphiQL tab (kept in this browser). Leave empty to forget it.', '');
    if (value === null) return;
    setKey(value, true);
  });
  document.addEventListener('change', function (event) {
    var target = event.target;
    if (!target || target.id !== 'reportql-examples' || !target.value) return;
    var name = target.value;
    target.value = '';
    var example = EXAMPLES.filter(function (e) { return e.name === name; })[0];
    // The page is 9 MB: an example opens in a new GraphiQL tab of this page, and only a page
    // without the editor API falls back to loading the example's link.
    if (!example || !editorModel('operation')) {
      window.location.assign(ENDPOINT + '?example=' + encodeURIComponent(name));
      return;
    }
    exampleRequest(example).then(function (request) {
      window.history.pushState({ reportqlExample: name }, '', request.url);
      openTab(request.query, request.variables);
    });
  });
  // Back and forward between examples: the address's query and variables into the current tab.
  window.addEventListener('popstate', function () {
    var url = new URL(window.location.href);
    var query = url.searchParams.get('query');
    if (query === null || !editorModel('operation')) return;
    setEditor('operation', query);
    setEditor('variables', url.searchParams.get('variables') || '');
  });

  /** GraphiQL's Monaco model of one editor ('operation', 'variables', 'response'), or null. */
  function editorModel(kind) {
    var api = window.monaco;
    if (!api || !api.editor) return null;
    var file = kind === 'operation' ? 'operation.graphql' : kind + '.json';
    // GraphiQL names its models "<editor id>-operation.graphql" and so on.
    return api.editor.getModels().filter(function (m) { return m.uri.path.slice(-file.length) === file; })[0] || null;
  }
  function setEditor(kind, text) {
    var model = editorModel(kind);
    if (model && model.getValue() !== text) model.setValue(text);
  }
  /** Adds a GraphiQL tab and fills it once GraphiQL has switched its editors to the new tab. */
  function openTab(query, variables) {
    var tabs = document.querySelectorAll('.graphiql-tab').length;
    var before = (editorModel('operation') || { getValue: function () { return ''; } }).getValue();
    var add = document.querySelector('.graphiql-tab-add');
    if (add) add.click();
    var frames = 0;
    (function fill() {
      var switched = document.querySelectorAll('.graphiql-tab').length > tabs && editorModel('operation').getValue() !== before;
      if (add && !switched && frames++ < 120) { window.requestAnimationFrame(fill); return; }
      setEditor('operation', query);
      setEditor('variables', variables || '');
      setEditor('response', '');
    })();
  }
  /** An example's query, its variables filled from the key's data, and its address. */
  function exampleRequest(example) {
    return lookUpIds().then(function (ids) {
      var variables = exampleVariables(example, ids);
      var url = new URL(ENDPOINT, window.location.href);
      url.searchParams.set('query', example.query);
      var text = Object.keys(variables).length > 0 ? JSON.stringify(variables, null, 2) : '';
      if (text) url.searchParams.set('variables', text);
      return { query: example.query, variables: text, url: url.href };
    });
  }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; });
  }
  function titleHtml() {
    var options = EXAMPLES.map(function (e) { return '<option value="' + escapeHtml(e.name) + '">' + escapeHtml(e.title) + '</option>'; }).join('');
    return 'ReportQL <span style="margin-left:1em;font-size:0.8em;display:inline-flex;gap:0.5em">' +
      '<button type="button" id="reportql-key" title="The API key every tab uses">' + escapeHtml(keyLabel()) + '</button>' +
      '<select id="reportql-examples" style="max-width:16em" title="Open an example in a new GraphiQL tab"><option value="">Examples\u2026</option>' + options + '</select></span>';
  }
  function welcome() {
    var base = window.location.origin + ENDPOINT + '?example=';
    var links = EXAMPLES.map(function (e) { return '#   ' + base + e.name + '\n#       ' + e.title; }).join('\n');
    var first = EXAMPLES[0] ? EXAMPLES[0].query.replace(/^(#.*\n)+/, '') : '';
    return WELCOME.replace('__EXAMPLE_LINKS__', links) + '\n' + first;
  }
  function lookUpIds() {
    var key = readKey();
    if (!key) return Promise.resolve({});
    return realFetch(ENDPOINT, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: key },
      body: JSON.stringify({ query: IDS_QUERY }),
    }).then(function (response) { return response.json(); }).then(function (body) {
      return pickExampleIds(body && body.data);
    }).catch(function () { return {}; });
  }

  window.reportqlGraphiQL = {
    setApiKey: function (value) { setKey(value, true); },
    start: function (render, base) {
      var options = Object.assign({}, base, { title: titleHtml() });
      var url = new URL(window.location.href);
      var name = url.searchParams.get('example');
      var example = name ? EXAMPLES.filter(function (e) { return e.name === name; })[0] : undefined;
      if (!example) {
        if (url.searchParams.get('variables')) options.variables = url.searchParams.get('variables');
        if (!url.searchParams.get('query')) options.defaultTabs = [{ query: welcome() }];
        render(options);
        return;
      }
      exampleRequest(example).then(function (request) {
        if (request.variables) options.variables = request.variables;
        window.history.replaceState({ reportqlExample: name }, '', request.url);
        options.query = request.query;
        render(options);
      });
    },
  };
})();`;

/** JSON safe inside an inline <script> (no "</script>", no U+2028). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** The page script with its constants and the example functions filled in. */
export function graphiqlPageScript(): string {
  const replacements: Record<string, string> = {
    __STORAGE_KEY__: scriptJson(GRAPHIQL_KEY_STORAGE),
    __SCHEMA_HEADER__: scriptJson(SCHEMA_HASH_HEADER),
    __EXAMPLES__: scriptJson(GRAPHIQL_EXAMPLES.map(({ name, title, query, variables }) => ({ name, title, query, variables }))),
    __IDS_QUERY__: scriptJson(EXAMPLE_IDS_QUERY),
    __WELCOME__: scriptJson(WELCOME),
    __PICK_IDS__: pickExampleIds.toString(),
    __EXAMPLE_VARIABLES__: exampleVariables.toString(),
  };
  return PAGE_SCRIPT.replace(/__[A-Z_]+__/g, (name) => replacements[name] ?? name);
}

export interface GraphiqlPage {
  html: string;
  gzipped: Buffer;
  /** Strong entity tags of the two encodings: the content hash, computed once per process. */
  etag: string;
  gzippedEtag: string;
}

let page: GraphiqlPage | undefined;

/** Monaco's own switch for exposing `window.monaco`, which the page script drives the editors with. */
const MONACO_PRIVATE = 'globalAPI: false,';

/**
 * GraphiQL from our own server (no CDN). The options GraphiQL starts with are completed in the
 * browser (the page script's `start`), so one static page serves every key, example and link.
 */
export function graphiqlPage(): GraphiqlPage {
  if (!page) {
    const options = { title: 'ReportQL', endpoint: '/graphql', subscriptionsProtocol: 'WS' as const, defaultQuery: '# Write a query, or open one from the Examples menu above.\n' };
    const rendered = renderGraphiQL(options);
    const json = JSON.stringify(options);
    const call = rendered.indexOf('YogaGraphiQL.renderYogaGraphiQL(');
    const at = rendered.indexOf(json, call);
    const end = rendered.indexOf(');', at + json.length);
    const root = '<div id="root"></div>';
    if (call < 0 || at < 0 || end < 0 || !rendered.includes(MONACO_PRIVATE) || !/^\s*window\.document\.querySelector\('#root'\),\s*$/.test(rendered.slice(call + 'YogaGraphiQL.renderYogaGraphiQL('.length, at)) || !rendered.includes(root)) {
      throw new Error('the GraphiQL page of @graphql-yoga/render-graphiql has an unexpected layout');
    }
    const start = `reportqlGraphiQL.start(function (options) { YogaGraphiQL.renderYogaGraphiQL(window.document.querySelector('#root'), options); }, ${scriptJson(options)});`;
    const html = (rendered.slice(0, call) + start + rendered.slice(end + 2))
      .replace(MONACO_PRIVATE, 'globalAPI: true,')
      .replace(root, () => `${root}\n<script>${graphiqlPageScript()}</script>`);
    const hash = createHash('sha256').update(html).digest('base64url').slice(0, 32);
    page = { html, gzipped: gzipSync(html), etag: `"${hash}"`, gzippedEtag: `"${hash}-gzip"` };
  }
  return page;
}
