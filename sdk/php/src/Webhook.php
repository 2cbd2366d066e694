<?php

declare(strict_types=1);

namespace Cauri;

/**
 * Verifies Cauri's webhook requests in one call:
 *
 *     $event = \Cauri\Webhook::verify(file_get_contents('php://input'), getallheaders(), $secretKey);
 *
 * The scheme is X-Service-Signature: t=<unix>,v1=<hex>[,v1=<hex>...], v1 the
 * HMAC-SHA256 keyed with the workspace's secret key of the event's mode of
 * "<unix>.<raw body>" (webhook/webhook.go Verify, the same shared vectors).
 */
final class Webhook
{
    public const TOLERANCE = 300;
    public const SIGNATURE_HEADER = 'x-service-signature';

    /**
     * @param string $rawBody the body exactly as received: never json_decode then json_encode it
     * @param array<string, string|list<string>> $headers as the framework gives them: any case of
     *        names; a value may be a string or a list (Laravel/Symfony's $request->headers->all())
     * @param string $secret the workspace's secret key of the event's mode (svc_test_sec_... or svc_live_sec_...)
     * @param int|\DateTimeInterface|null $now the receiver's clock (unix seconds); default time()
     * @return array<string, mixed> the event, decoded (amount, fee, amount_refunded as strings: "15000")
     * @throws WebhookException reason no_signature, bad_signature or too_old
     */
    public static function verify(string $rawBody, array $headers, string $secret, int|\DateTimeInterface|null $now = null, int $tolerance = self::TOLERANCE): array
    {
        $header = self::header($headers, self::SIGNATURE_HEADER) ?? '';
        $ts = -1;
        $sigs = [];
        foreach (explode(',', $header) as $part) {
            $kv = explode('=', trim($part), 2);
            if (count($kv) !== 2) {
                continue;
            }
            [$k, $v] = $kv;
            if ($k === 't') {
                if (preg_match('/^[+-]?[0-9]{1,18}$/', $v)) {
                    $ts = (int) $v;
                }
            } elseif ($k === 'v1') {
                if ($v !== '' && strlen($v) % 2 === 0 && ctype_xdigit($v)) {
                    $sigs[] = hex2bin($v);
                } elseif ($v === '') {
                    $sigs[] = ''; // Go's hex.DecodeString("") is an empty signature: it never matches
                }
            }
        }
        if ($ts < 0 || $sigs === []) {
            throw new WebhookException(WebhookException::NO_SIGNATURE, 'no valid X-Service-Signature header');
        }
        $want = hash_hmac('sha256', $ts . '.' . $rawBody, $secret, true);
        $matched = false;
        foreach ($sigs as $sig) {
            if (hash_equals($want, $sig)) { // constant time
                $matched = true;
            }
        }
        if (!$matched) {
            throw new WebhookException(WebhookException::BAD_SIGNATURE, 'signature does not match the body');
        }
        $nowTs = $now instanceof \DateTimeInterface ? $now->getTimestamp() : ($now ?? time());
        if (abs($nowTs - $ts) > $tolerance) {
            throw new WebhookException(WebhookException::TOO_OLD, 'timestamp is more than ' . $tolerance . ' seconds from now');
        }
        try {
            $event = Json::decode($rawBody); // amounts as strings, as the models give them
        } catch (\JsonException) {
            return []; // signed, but not JSON (an empty body)
        }
        return is_array($event) ? $event : [];
    }

    /**
     * The first value of a header, whatever the case of its name and whether
     * values are strings or lists.
     *
     * @param array<string, string|list<string>> $headers
     */
    public static function header(array $headers, string $name): ?string
    {
        $name = strtolower($name);
        foreach ($headers as $k => $v) {
            if (strtolower(str_replace('_', '-', (string) $k)) !== $name && strtolower((string) $k) !== 'http_' . str_replace('-', '_', $name)) {
                continue;
            }
            if (is_array($v)) {
                $v = $v[0] ?? null;
            }
            return $v === null ? null : (string) $v;
        }
        return null;
    }
}
