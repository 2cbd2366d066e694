<?php

declare(strict_types=1);

namespace Cauri\Resources;

use Cauri\CauriException;
use Cauri\Client;
use Cauri\Json;
use Cauri\Model;
use Cauri\Response;

/** @internal the common part of the resources */
abstract class Resource
{
    public function __construct(protected readonly Client $client)
    {
    }

    /**
     * @template T of Model
     * @param class-string<T> $class
     * @return T
     */
    protected static function model(string $class, Response $res): Model
    {
        try {
            $data = Json::decode($res->body);
        } catch (\JsonException $e) {
            throw new CauriException($res->status, 'invalid_response', 'the answer is not JSON: ' . $e->getMessage(), rawBody: $res->body, requestId: $res->requestId(), headers: $res->headers);
        }
        if (!is_array($data)) {
            throw new CauriException($res->status, 'invalid_response', 'the answer is not a JSON object', rawBody: $res->body, requestId: $res->requestId(), headers: $res->headers);
        }
        return $class::from($data, $res);
    }
}
