<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * The webhook addresses and the events of the key's mode.
 *
 * @property-read bool $success
 * @property-read ?string $webhookUrl
 * @property-read ?string $testWebhookUrl
 * @property-read list<string> $events
 * @property-read list<string> $available_events
 */
final class WebhookConfig extends Model
{
    public const SCHEMA = '#/components/schemas/WebhookConfig';
    public const FIELDS = ['success', 'webhookUrl', 'testWebhookUrl', 'events', 'available_events'];
}
