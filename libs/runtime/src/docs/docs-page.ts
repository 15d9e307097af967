/*
 * The /docs page: swagger-ui from swagger-ui-dist, started by an external script. Nothing is inline
 * (no <style>, no style="", no <script> body), so the page runs under the strict Content-Security-Policy
 * (default-src 'self', no 'unsafe-inline', no 'unsafe-eval') served on every response. The texts live
 * here rather than in .html/.js files because the build is plain tsc, which copies only what it compiles.
 */

export const DOCS_ASSETS = '/docs/assets';

/** Title is the only value put into the page, so it is escaped as HTML text. */
export function docsPageHtml(title: string): string {
  const text = title.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${text}</title>
  <link rel="icon" type="image/png" href="${DOCS_ASSETS}/favicon-32x32.png">
  <link rel="stylesheet" href="${DOCS_ASSETS}/swagger-ui.css">
  <link rel="stylesheet" href="${DOCS_ASSETS}/docs.css">
</head>
<body>
  <noscript>This page needs JavaScript. The raw document is at <a href="/docs/openapi.json">/docs/openapi.json</a>.</noscript>
  <div id="swagger-ui"></div>
  <script src="${DOCS_ASSETS}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_ASSETS}/docs.js"></script>
</body>
</html>
`;
}

export const DOCS_CSS = `html { box-sizing: border-box; overflow-y: scroll; }
*, *::before, *::after { box-sizing: inherit; }
body { margin: 0; background: #fafafa; }
`;

/**
 * Resolves the document next to this script (so a proxy path prefix keeps working). `validatorUrl: null`
 * stops swagger-ui from loading a badge image from validator.swagger.io, which the CSP would refuse.
 * The admin and ingest tokens typed into "Authorize" stay in this tab's memory only.
 */
export const DOCS_JS = `(function () {
  'use strict';
  var script = document.currentScript;
  var documentUrl = new URL('../openapi.json', script ? script.src : window.location.href).toString();
  window.addEventListener('DOMContentLoaded', function () {
    window.ui = window.SwaggerUIBundle({
      url: documentUrl,
      dom_id: '#swagger-ui',
      deepLinking: true,
      validatorUrl: null,
      persistAuthorization: false,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      tryItOutEnabled: false,
      presets: [window.SwaggerUIBundle.presets.apis],
      layout: 'BaseLayout'
    });
  });
})();
`;
