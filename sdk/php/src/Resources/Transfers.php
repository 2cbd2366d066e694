<?php

declare(strict_types=1);

namespace Cauri\Resources;

use Cauri\Client;
use Cauri\Models\Transfer;
use Cauri\Models\TransferBatch;
use Cauri\Models\TransferList;
use Cauri\Models\TransferOptions;
use Cauri\Models\TransferRecipient;

/** Payouts to Mobile Money accounts (secret production key): $cauri->transfers. */
final class Transfers extends Resource
{
    /**
     * POST /v1/transfers. Always sent with an Idempotency-Key: $idempotencyKey,
     * else the body's idempotency_key, else a random UUID v4; the same on every
     * retry, so a retry never pays twice. Keep the key with your payout record
     * to retry later yourself (read it back from the exception's headers or pass your own).
     *
     * @param array{amount: int|string, country: string, operator: string, phone: string, currency?: string,
     *        recipient_name?: string, description?: string, idempotency_key?: string, recipient_name_check?: bool} $params
     */
    public function create(array $params, ?string $idempotencyKey = null): Transfer
    {
        $key = $idempotencyKey ?? (isset($params['idempotency_key']) ? (string) $params['idempotency_key'] : Client::idempotencyKey());
        return self::model(Transfer::class, $this->client->request('POST /v1/transfers', body: $params, idempotencyKey: $key));
    }

    /**
     * POST /v1/transfers/batch: up to 500 transfer requests, one result each.
     * The batch's Idempotency-Key is required by the API: $idempotencyKey or a random UUID v4.
     *
     * @param list<array<string, mixed>> $transfers
     */
    public function batch(array $transfers, ?string $idempotencyKey = null): TransferBatch
    {
        return self::model(TransferBatch::class, $this->client->request('POST /v1/transfers/batch', body: ['transfers' => $transfers], idempotencyKey: $idempotencyKey ?? Client::idempotencyKey()));
    }

    /**
     * POST /v1/transfers/recipient: the account holder's name before a payout. Not retried.
     *
     * @param array{country: string, operator: string, phone: string} $params
     */
    public function recipient(array $params): TransferRecipient
    {
        return self::model(TransferRecipient::class, $this->client->request('POST /v1/transfers/recipient', body: $params));
    }

    /** GET /v1/transfers/{id}. */
    public function retrieve(string $id): Transfer
    {
        return self::model(Transfer::class, $this->client->request('GET /v1/transfers/{id}', ['id' => $id]));
    }

    /**
     * GET /v1/transfers: the latest transfers.
     *
     * @param array{status?: 'processing'|'succeeded'|'failed', limit?: int} $query
     */
    public function list(array $query = []): TransferList
    {
        unset($query['options']);
        return self::model(TransferList::class, $this->client->request('GET /v1/transfers', query: $query));
    }

    /** GET /v1/transfers?options=1: the countries, currencies and operators the workspace can send to. */
    public function options(): TransferOptions
    {
        return self::model(TransferOptions::class, $this->client->request('GET /v1/transfers', query: ['options' => '1']));
    }
}
