<?php

declare(strict_types=1);

namespace Cauri\Resources;

use Cauri\Client;
use Cauri\Models\Refund;
use Cauri\Models\RefundList;

/** Refunds of successful payments: $cauri->refunds. */
final class Refunds extends Resource
{
    /**
     * POST /v1/refunds. Always sent with an Idempotency-Key ($idempotencyKey or
     * a random UUID v4), the same on every retry: a retry never refunds twice.
     *
     * @param array{transaction_id: string, amount?: int|string, method?: 'aggregator'|'payout', reason?: string} $params
     */
    public function create(array $params, ?string $idempotencyKey = null): Refund
    {
        return self::model(Refund::class, $this->client->request('POST /v1/refunds', body: $params, idempotencyKey: $idempotencyKey ?? Client::idempotencyKey()));
    }

    /** @param array{transaction_id?: string, status?: 'pending'|'succeeded'|'failed', limit?: int, starting_after?: string} $query */
    public function list(array $query = []): RefundList
    {
        return self::model(RefundList::class, $this->client->request('GET /v1/refunds', query: $query));
    }

    public function retrieve(string $id): Refund
    {
        return self::model(Refund::class, $this->client->request('GET /v1/refunds/{id}', ['id' => $id]));
    }
}
