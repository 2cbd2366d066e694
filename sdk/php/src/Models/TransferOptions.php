<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * Where the workspace can send money.
 *
 * @property-read string $object
 * @property-read list<array{country:string,name:string,currency:string,operators:list<array{operator:string,name:string}>}> $countries
 * @property-read list<string> $currencies
 */
final class TransferOptions extends Model
{
    public const SCHEMA = '#/components/schemas/TransferOptions';
    public const FIELDS = ['object', 'countries', 'currencies'];
}
