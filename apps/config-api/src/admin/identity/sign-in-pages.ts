import type { Response } from 'express';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]);
}

/** A refused sign-in: a small page of its own (the console cannot show it: the browser is mid-redirect). */
export function sendRefusal(response: Response, status: number, consoleUrl: string, reason: string): void {
  response
    .status(status)
    .type('html')
    .setHeader('Cache-Control', 'no-store')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in refused</title></head>` +
        `<body><h1>Sign-in refused</h1><p>${escapeHtml(reason)}</p><p><a href="${escapeHtml(consoleUrl)}">Back to the console</a></p></body></html>`,
    );
}
