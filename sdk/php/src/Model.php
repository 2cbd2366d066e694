<?php

declare(strict_types=1);

namespace Cauri;

/**
 * A response object of the API, hand-kept from openapi.yaml: FIELDS lists the
 * properties of the schema at SCHEMA (a JSON pointer into the document), a test
 * holds both to /v1/openapi.json. Fields read as properties ($session->status)
 * or as array keys ($session['status']); nested objects of NESTED are models
 * too. Amounts (amount, fee, amount_refunded) are strings of the JSON number
 * as sent ("15000", "15.5"): money never goes through a float.
 *
 * @implements \ArrayAccess<string, mixed>
 */
abstract class Model implements \ArrayAccess, \JsonSerializable
{
    /** JSON pointer of the schema in openapi.yaml. */
    public const SCHEMA = '';
    /** @var list<string> every property of the schema */
    public const FIELDS = [];
    /** @var array<string, class-string<Model>> field => model of its value (a list of them when the value is a list) */
    public const NESTED = [];

    /** @var array<string, mixed> */
    private array $values;
    private ?Response $response = null;

    /** @param array<string, mixed> $values */
    final public function __construct(array $values)
    {
        foreach (static::NESTED as $field => $class) {
            $v = $values[$field] ?? null;
            if (!is_array($v)) {
                continue;
            }
            $values[$field] = array_is_list($v) && $v !== []
                ? array_map(static fn ($item) => is_array($item) ? new $class($item) : $item, $v)
                : ($v === [] ? [] : new $class($v));
        }
        $this->values = $values;
    }

    /** @param array<string, mixed> $values */
    public static function from(array $values, ?Response $response = null): static
    {
        $m = new static($values);
        $m->response = $response;
        return $m;
    }

    public function __get(string $name): mixed
    {
        return $this->values[$name] ?? null;
    }

    public function __isset(string $name): bool
    {
        return isset($this->values[$name]);
    }

    public function offsetExists(mixed $offset): bool
    {
        return array_key_exists($offset, $this->values);
    }

    public function offsetGet(mixed $offset): mixed
    {
        return $this->values[$offset] ?? null;
    }

    public function offsetSet(mixed $offset, mixed $value): void
    {
        throw new \LogicException(static::class . ' is read-only');
    }

    public function offsetUnset(mixed $offset): void
    {
        throw new \LogicException(static::class . ' is read-only');
    }

    /** @return array<string, mixed> the object as decoded, nested models as arrays */
    public function toArray(): array
    {
        $out = [];
        foreach ($this->values as $k => $v) {
            $out[$k] = self::plain($v);
        }
        return $out;
    }

    public function jsonSerialize(): mixed
    {
        return $this->toArray();
    }

    /** X-Request-Id of the answer this object came in. */
    public function requestId(): ?string
    {
        return $this->response?->requestId();
    }

    /** Whether the answer was a replay of an earlier request with the same Idempotency-Key. */
    public function replayed(): bool
    {
        return $this->response?->replayed() ?? false;
    }

    public function httpStatus(): ?int
    {
        return $this->response?->status;
    }

    private static function plain(mixed $v): mixed
    {
        if ($v instanceof Model) {
            return $v->toArray();
        }
        if (is_array($v)) {
            return array_map([self::class, 'plain'], $v);
        }
        return $v;
    }
}
