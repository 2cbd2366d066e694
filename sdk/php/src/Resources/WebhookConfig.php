<?php

declare(strict_types=1);

namespace Cauri\Resources;

use Cauri\Models\WebhookConfig as Config;

/** Where webhooks go and which events: $cauri->webhookConfig. */
final class WebhookConfig extends Resource
{
    /** GET /v1/config/webhook. */
    public function retrieve(): Config
    {
        return self::model(Config::class, $this->client->request('GET /v1/config/webhook'));
    }

    /**
     * PATCH /v1/config/webhook (retried like a read: it sets a state).
     *
     * @param array{webhookUrl?: string, mode?: 'live'|'test', events?: list<string>} $params wire names:
     *        webhookUrl is camelCase; "" removes the address of the mode
     */
    public function update(array $params): Config
    {
        return self::model(Config::class, $this->client->request('PATCH /v1/config/webhook', body: $params));
    }
}
