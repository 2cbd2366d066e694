<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * The routing decision for a payment.
 *
 * @property-read RouteDecision $routing
 * @property-read ?string $detectedOperator
 * @property-read list<AvailableMethod> $availableMethods
 * @property-read list<RankedProvider> $rankedProviders
 */
final class RouteResponse extends Model
{
    public const SCHEMA = '#/components/schemas/RouteResponse';
    public const FIELDS = ['routing', 'detectedOperator', 'availableMethods', 'rankedProviders'];
    public const NESTED = ['routing' => RouteDecision::class, 'availableMethods' => AvailableMethod::class, 'rankedProviders' => RankedProvider::class];
}
