// A webhook endpoint in Express's shape. In an Express app:
//
//   import express from 'express';
//   import { cauriWebhook } from './express-webhook.mjs';
//   app.post('/webhooks/cauri', express.raw({ type: 'application/json' }), cauriWebhook);
//
// express.raw keeps req.body as the raw Buffer: the signature covers those
// bytes (express.json would parse them, and a parsed body cannot be verified).
//
// Run as it is (CAURI_SECRET_KEY=... PORT=3001 node examples/express-webhook.mjs), it
// serves the same handler with Express when it is installed, else with node:http
// through the few lines of adapter at the bottom.
import { pathToFileURL } from 'node:url';
import { verifyWebhook, WebhookVerificationError } from '@cauri/node';

export function cauriWebhook(req, res) {
  let event;
  try {
    event = verifyWebhook(req.body, req.headers, process.env.CAURI_SECRET_KEY);
  } catch (e) {
    if (e instanceof WebhookVerificationError) return res.status(400).send(e.reason);
    throw e;
  }
  res.sendStatus(204); // answer within 10 seconds, then do the work
  if (event.event === 'payment.completed') {
    console.log(`payment.completed ${event.data.id} order ${event.data.metadata?.order_id ?? '-'}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const port = Number(process.env.PORT ?? 3001);
  const express = await import('express').then((m) => m.default).catch(() => null);
  if (express) {
    const app = express();
    app.post('/webhooks/cauri', express.raw({ type: 'application/json' }), cauriWebhook);
    app.listen(port, '127.0.0.1', () => console.log(`webhook endpoint on http://127.0.0.1:${port}/webhooks/cauri (express)`));
  } else {
    // The adapter: req.body as express.raw gives it, res.status().send() and res.sendStatus().
    const http = await import('node:http');
    http.createServer(async (req, res) => {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      req.body = Buffer.concat(chunks);
      res.status = (code) => ((res.statusCode = code), res);
      res.send = (text) => res.end(String(text));
      res.sendStatus = (code) => res.status(code).end();
      if (req.method === 'POST' && req.url === '/webhooks/cauri') return cauriWebhook(req, res);
      res.sendStatus(404);
    }).listen(port, '127.0.0.1', () => console.log(`webhook endpoint on http://127.0.0.1:${port}/webhooks/cauri (node:http)`));
  }
}
