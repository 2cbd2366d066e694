// types/schema.d.ts is what openapi-typescript (pinned in package.json's
// generate script) makes of openapi.yaml: regenerated into a temporary file,
// it must equal the committed one. Run `npm run generate` after changing openapi.yaml.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const dir = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

test('types/schema.d.ts is generated from openapi.yaml', { timeout: 120_000 }, async () => {
  const args = pkg.scripts.generate.split(' ');
  assert.deepEqual(args.slice(0, 2), ['npx', '--yes']);
  assert.match(args[2], /^openapi-typescript@\d+\.\d+\.\d+$/, 'the generate script pins an exact version');
  assert.deepEqual(args.slice(-2), ['-o', 'types/schema.d.ts']);
  const tmp = mkdtempSync(join(tmpdir(), 'cauri-node-schema-'));
  try {
    const out = join(tmp, 'schema.d.ts');
    await run('npx', [...args.slice(1, -1), out], { cwd: dir, timeout: 110_000 });
    const want = readFileSync(out, 'utf8');
    const got = readFileSync(join(dir, 'types/schema.d.ts'), 'utf8');
    assert.ok(got === want, 'types/schema.d.ts differs from openapi.yaml: run `npm run generate` in sdk/node');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
