<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * A country's methods and its providers ranked by reliability.
 *
 * @property-read string $country
 * @property-read string $currency
 * @property-read list<AvailableMethod> $availableMethods
 * @property-read list<RankedProvider> $rankedProviders
 */
final class RouteOverview extends Model
{
    public const SCHEMA = '#/paths/~1v1~1route/get/responses/200/content/application~1json/schema';
    public const FIELDS = ['country', 'currency', 'availableMethods', 'rankedProviders'];
    public const NESTED = ['availableMethods' => AvailableMethod::class, 'rankedProviders' => RankedProvider::class];
}
