<?php

declare(strict_types=1);

namespace Cauri\Resources;

use Cauri\Models\PaymentLink;
use Cauri\Models\PaymentLinkCheck;
use Cauri\Models\PaymentLinkList;

/** Payment links (production only: a test key gets 403 test_mode): $cauri->paymentLinks. */
final class PaymentLinks extends Resource
{
    /**
     * POST /v1/payment-links. Sent once, never retried: the route takes no
     * Idempotency-Key, so a retry could make a second link.
     *
     * @param array{title: string, amount: int|string, currency?: string, expires_at?: string, max_payments?: int,
     *        phone?: string, metadata?: array<string, string>} $params
     */
    public function create(array $params): PaymentLink
    {
        return self::model(PaymentLink::class, $this->client->request('POST /v1/payment-links', body: $params));
    }

    /** @param array{limit?: int, starting_after?: string} $query */
    public function list(array $query = []): PaymentLinkList
    {
        return self::model(PaymentLinkList::class, $this->client->request('GET /v1/payment-links', query: $query));
    }

    public function retrieve(string $id): PaymentLink
    {
        return self::model(PaymentLink::class, $this->client->request('GET /v1/payment-links/{id}', ['id' => $id]));
    }

    /** @param array{active?: bool, expires_at?: string|null} $params */
    public function update(string $id, array $params): PaymentLink
    {
        return self::model(PaymentLink::class, $this->client->request('PATCH /v1/payment-links/{id}', ['id' => $id], body: $params));
    }

    /** GET /v1/payment-links/{id}/qr: the image's bytes (SVG, or PNG with $format "png"). */
    public function qr(string $id, string $format = 'svg'): string
    {
        return $this->client->request('GET /v1/payment-links/{id}/qr', ['id' => $id], ['format' => $format], headers: ['Accept' => 'image/svg+xml, image/png'])->body;
    }

    /** GET /v1/payment-links/{id}/check: whether the link was paid. */
    public function check(string $id): PaymentLinkCheck
    {
        return self::model(PaymentLinkCheck::class, $this->client->request('GET /v1/payment-links/{id}/check', ['id' => $id]));
    }
}
