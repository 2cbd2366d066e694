<?php

declare(strict_types=1);

namespace Cauri\Resources;

use Cauri\Models\Delivery;
use Cauri\Models\DeliveryList;

/** The log of webhook deliveries: $cauri->webhookDeliveries. */
final class WebhookDeliveries extends Resource
{
    /**
     * GET /v1/webhooks/deliveries, the key's mode, newest first.
     *
     * @param array{transaction_id?: string, status?: 'pending'|'delivered'|'failed', event?: string, limit?: int} $query
     */
    public function list(array $query = []): DeliveryList
    {
        return self::model(DeliveryList::class, $this->client->request('GET /v1/webhooks/deliveries', query: $query));
    }

    /** GET /v1/webhooks/deliveries/{id}. */
    public function retrieve(string $id): Delivery
    {
        return self::model(Delivery::class, $this->client->request('GET /v1/webhooks/deliveries/{id}', ['id' => $id]));
    }

    /** POST /v1/webhooks/deliveries/{id}/resend: one attempt now; the delivery after it. Not retried. */
    public function resend(string $id): Delivery
    {
        return self::model(Delivery::class, $this->client->request('POST /v1/webhooks/deliveries/{id}/resend', ['id' => $id]));
    }
}
