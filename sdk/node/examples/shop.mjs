// A minimal shop: POST /buy creates a checkout session and sends the customer
// to its hosted page; the order is fulfilled on the verified payment.completed
// webhook (never on the customer's return to success_url).
//
//   CAURI_SECRET_KEY=svc_test_sec_... CAURI_BASE_URL=http://localhost:8080 PORT=3000 node examples/shop.mjs
//   then set the webhook address to http://<this shop>/webhooks/cauri (dashboard, or
//   cauri.webhookConfig.update({ webhookUrl })).
import http from 'node:http';
import { Cauri, WebhookVerificationError } from '@cauri/node';

const cauri = new Cauri(process.env.CAURI_SECRET_KEY, { baseURL: process.env.CAURI_BASE_URL });
const publicURL = process.env.PUBLIC_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
const orders = new Map(); // your database: order id -> { status, session }
const seenEvents = new Set(); // an event may arrive twice: deduplicate on its id
let next = 1042;

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, publicURL);
  const body = [];
  for await (const chunk of req) body.push(chunk);
  const raw = Buffer.concat(body); // the raw bytes: the signature covers them

  if (req.method === 'POST' && url.pathname === '/buy') {
    const orderId = String(next++);
    let session;
    try {
      session = await cauri.sessions.create(
        {
          amount: 15000,
          currency: 'XOF',
          description: '2 pagnes wax',
          metadata: { order_id: orderId },
          success_url: `${publicURL}/thanks?order=${orderId}`,
        },
        { idempotencyKey: `order-${orderId}` }, // a retry never makes a second session
      );
    } catch (e) {
      // A CauriError (status, code, message): tell the customer, log the rest.
      console.error(`order ${orderId}: no payment session: ${e.message}`);
      res.writeHead(502).end('The payment could not start; please try again.');
      return;
    }
    orders.set(orderId, { status: 'pending', session: session.id });
    res.writeHead(303, { Location: session.url }).end();
    return;
  }

  if (req.method === 'POST' && url.pathname === '/webhooks/cauri') {
    let event;
    try {
      event = cauri.verifyWebhook(raw, req.headers); // the secret key of the events' mode
    } catch (e) {
      if (!(e instanceof WebhookVerificationError)) throw e;
      res.writeHead(400).end(e.reason);
      return;
    }
    res.writeHead(204).end(); // acknowledge first, then work
    if (seenEvents.has(event.id)) return;
    seenEvents.add(event.id);
    const order = orders.get(event.data.metadata?.order_id);
    if (event.event === 'payment.completed' && order && event.data.metadata.cauri_test_webhook !== 'true') {
      order.status = 'paid';
      console.log(`order ${event.data.metadata.order_id} paid: shipping it`);
    }
    return;
  }

  const m = url.pathname.match(/^\/orders\/(\w+)$/);
  if (req.method === 'GET' && m && orders.has(m[1])) {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(orders.get(m[1])));
    return;
  }
  res.writeHead(404).end();
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => console.log(`shop listening on ${publicURL}`));
