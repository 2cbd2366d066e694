<?php

declare(strict_types=1);

use Cauri\Webhook;
use Cauri\WebhookException;

/**
 * A webhook endpoint in the shape of a Laravel controller, in plain PHP. In
 * Laravel (exclude the route from CSRF):
 *
 *     public function __invoke(Request $request) {
 *         [$status, $body] = $this->webhooks->handle($request->getContent(), $request->headers->all());
 *         return response($body, $status);
 *     }
 */
final class WebhookController
{
    /** @param \Closure(string $orderId, array $session): void $fulfil marks the order paid (idempotent: events may come twice) */
    public function __construct(private readonly string $secretKey, private readonly \Closure $fulfil)
    {
    }

    /**
     * @param string $content the raw body ($request->getContent()): never re-encoded JSON
     * @param array<string, list<string>|string> $headers $request->headers->all()
     * @return array{int, string} the status and body to answer
     */
    public function handle(string $content, array $headers): array
    {
        try {
            $event = Webhook::verify($content, $headers, $this->secretKey);
        } catch (WebhookException $e) {
            return [400, $e->reason]; // no_signature, bad_signature or too_old
        }
        $session = $event['data'] ?? [];
        if (($event['event'] ?? '') === 'payment.completed'
            && ($session['metadata']['cauri_test_webhook'] ?? '') !== 'true' // the dashboard's test button
            && isset($session['order_id'])) {
            ($this->fulfil)($session['order_id'], $session);
        }
        return [200, 'ok']; // answer within 10 s; do long work after
    }
}
