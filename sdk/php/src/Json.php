<?php

declare(strict_types=1);

namespace Cauri;

/**
 * JSON with money kept exact. The API takes and gives amounts as JSON numbers
 * in major units (15000 XOF, 15.5 GHS). Requests take an amount as an int or
 * a string of its decimal digits ("15.5") and send it as a JSON number, as
 * written; a float is refused. Answers give every `amount`, `fee` and
 * `amount_refunded` as the string of the number as sent ("15000", "15.5").
 *
 * @internal
 */
final class Json
{
    public const MONEY_FIELDS = ['amount', 'fee', 'amount_refunded'];

    /** @param array<mixed> $body */
    public static function encode(array $body): string
    {
        if ($body === []) {
            return '{}'; // every body of the API is an object
        }
        $raw = [];
        $body = self::mark($body, $raw);
        $json = json_encode($body, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR | JSON_PRESERVE_ZERO_FRACTION);
        foreach ($raw as $token => $digits) {
            $json = str_replace('"' . $token . '"', $digits, $json);
        }
        return $json;
    }

    /** @return mixed the decoded answer, amounts as strings */
    public static function decode(string $json): mixed
    {
        $fields = implode('|', self::MONEY_FIELDS);
        $json = preg_replace('/(?<!\\\\)("(?:' . $fields . ')"\s*:\s*)(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)/', '$1"$2"', $json) ?? $json;
        return json_decode($json, true, 512, JSON_BIGINT_AS_STRING | JSON_THROW_ON_ERROR);
    }

    /**
     * @param array<mixed> $v
     * @param array<string, string> $raw
     * @return array<mixed>
     */
    private static function mark(array $v, array &$raw): array
    {
        foreach ($v as $k => $item) {
            if ($item === [] && in_array($k, ['metadata', 'credentials'], true)) {
                $v[$k] = new \stdClass(); // an empty map is {}, not []
            } elseif (is_array($item)) {
                $v[$k] = self::mark($item, $raw);
            } elseif (is_string($k) && in_array($k, self::MONEY_FIELDS, true)) {
                if (is_float($item)) {
                    throw new \InvalidArgumentException("Cauri: $k must be an int or a string of digits (\"15.5\"), never a float");
                }
                if (is_string($item)) {
                    if (!preg_match('/^(0|[1-9][0-9]*)(\.[0-9]+)?$/', $item)) {
                        throw new \InvalidArgumentException("Cauri: $k \"$item\" is not a decimal number");
                    }
                    $token = "cauri-amount-" . count($raw) . '-' . bin2hex(random_bytes(6));
                    $raw[$token] = $item;
                    $v[$k] = $token;
                }
            }
        }
        return $v;
    }
}
