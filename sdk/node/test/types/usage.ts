// Compiled (never run) by test/types.test.mjs: the public types hold what a merchant writes.
import { Cauri, CauriError, verifyWebhook, WebhookVerificationError, type Session, type WebhookEvent } from '@cauri/node';

async function main(): Promise<void> {
  const cauri = new Cauri('svc_test_sec_x', { baseURL: 'http://localhost:8080', timeout: 10_000, maxRetries: 2 });
  const s: Session = await cauri.sessions.create(
    { amount: 15000, currency: 'XOF', metadata: { order_id: '1042' }, success_url: 'https://shop.example/thanks' },
    { idempotencyKey: 'order-1042' },
  );
  await cauri.sessions.create({ amount: '15.50', currency: 'GHS' });
  const st = await cauri.sessions.status(s.id);
  const paid: boolean = st.paid;
  const replayed: boolean = st.lastResponse.replayed;
  await cauri.sandbox.settle(s.id, 'succes');
  await cauri.webhookConfig.update({ webhookUrl: 'https://shop.example/hooks', events: ['payment.completed'] });
  const tr = await cauri.transfers.create({ amount: 1000, currency: 'XOF', country: 'CI', operator: 'orange_money', phone: '+2250707123456' });
  const trId: string = tr.id;
  await cauri.refunds.create({ transaction_id: s.id, amount: 5000n });
  const deliveries = await cauri.webhookDeliveries.list({ transaction_id: s.id, event: 'payment.completed', limit: 10 });
  await cauri.webhookDeliveries.resend(deliveries.data[0].id);
  const csv: string = await cauri.transactions.export({ status: 'SUCCESS' });
  const stream: ReadableStream<Uint8Array> = await cauri.transactions.exportStream({ format: 'csv' });
  void stream;
  const qr: Uint8Array = await cauri.paymentLinks.qr('pl_1', { format: 'png' });
  await cauri.routing.overview({ country: 'CI' });
  try {
    const e: WebhookEvent = verifyWebhook('{}', { 'x-service-signature': 't=1,v1=00' }, 'svc_test_sec_x', { now: new Date() });
    if (e.event === 'payment.completed') {
      const orderId: string | undefined = e.data.metadata?.order_id;
      void orderId;
    }
  } catch (err) {
    if (err instanceof WebhookVerificationError) {
      const r: 'no_signature' | 'bad_signature' | 'too_old' = err.reason;
      void r;
    } else if (err instanceof CauriError) {
      const status: number = err.status;
      const code: string | null = err.code;
      void status, code;
    }
  }
  // @ts-expect-error amounts are numbers or strings of digits, not words
  await cauri.sessions.create({ amount: 'fifteen' as 'x' });
  void paid, replayed, trId, csv, qr;
}
void main;
