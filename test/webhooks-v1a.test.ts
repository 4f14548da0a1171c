// v1a: ed25519 signatures beside v1 (Standard Webhooks), a per-endpoint choice whose public key
// is readable. The standardwebhooks package (1.1.1) verifies v1 only (it skips v1a entries), so
// v1a is verified here with node:crypto against the webhook's whpk_ public key.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { Webhook as Verifier } from 'standardwebhooks'
import { bearer, buildTestApp, expectStatus, seedWorkspace } from './helpers/app.ts'
import { privateOk, receiver, subscribe, verifiesV1a } from './helpers/webhooks.ts'
import { triggeredAlert } from './helpers/alert-data.ts'
import { enqueueWebhooks } from '../db/repositories/webhooks.ts'
import { asymmetricSignature, newSigningKeyPair } from '../core/webhooks.ts'

async function webhook(app: FastifyInstance, key: string, id: string) {
  const res = await app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers: bearer(key) })
  return res.json() as { signatures: string[]; public_key: string | null; format: string }
}

t.test('the key pair: whsk_ of 64 bytes, whpk_ of the raw 32, a signature the public key verifies', async (t) => {
  const { signingKey, publicKey } = newSigningKeyPair()
  t.match(signingKey, /^whsk_[A-Za-z0-9+/]{86}==$/)
  t.match(publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/)
  t.equal(Buffer.from(publicKey.slice(5), 'base64').length, 32)
  t.same(Buffer.from(signingKey.slice(5), 'base64').subarray(32), Buffer.from(publicKey.slice(5), 'base64'), 'the secret key ends with the public key')
  const sig = asymmetricSignature(signingKey, 'msg_1', 1700000000, '{"a":1}')
  t.match(sig, /^v1a,[A-Za-z0-9+/]{86}==$/, '64 bytes of signature')
  const msg = { path: '/', body: '{"a":1}', headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': sig } }
  t.ok(verifiesV1a(msg, publicKey))
  t.notOk(verifiesV1a({ ...msg, body: '{"a":2}' }, publicKey), 'a changed body does not verify')
  t.notOk(verifiesV1a(msg, newSigningKeyPair().publicKey), 'another key does not verify')
})

t.test('an alert reaches a receiver signed with v1 and v1a: standardwebhooks verifies v1, the public key v1a', async (t) => {
  const app = await buildTestApp(t, { config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t)
  const res = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(key), payload: { project: ws.project.id, url: rx.url, events: ['alert.triggered'], signatures: ['v1', 'v1a'] } })
  expectStatus(t, res, 201)
  const hook = res.json()
  t.match(hook, { signatures: ['v1', 'v1a'], public_key: /^whpk_/, format: 'standard', rate_limit: null, disabled_reason: null })
  t.notMatch(res.body, /whsk_/, 'the signing key is never in an answer')
  t.match(await webhook(app, key, hook.id), { public_key: hook.public_key, signatures: ['v1', 'v1a'] }, 'get_webhook shows the public key')
  const listed = await app.inject({ method: 'GET', url: `/v1/webhooks?project=${ws.project.id}`, headers: bearer(key) })
  t.match(listed.json().items, [{ id: hook.id, public_key: hook.public_key, signatures: ['v1', 'v1a'] }], 'list_webhooks too')

  await app.db.transaction((tx) => enqueueWebhooks(tx, ws.project.id, 'alert.triggered', new Date(), [triggeredAlert({ ...ws.project, name: 'Acme' })]))
  t.equal(await app.webhooks.deliverDue(), 1)
  const [msg] = rx.got
  const signatures = String(msg!.headers['webhook-signature']).split(' ')
  t.match(signatures, [/^v1,/, /^v1a,/], 'v1 then v1a, space-separated')
  const payload = new Verifier(hook.secret).verify(msg!.body, msg!.headers as Record<string, string>) as { type: string; data: { alert: { name: string } } }
  t.equal(payload.type, 'alert.triggered')
  t.equal(payload.data.alert.name, 'Signups dropped')
  t.ok(verifiesV1a(msg!, hook.public_key), 'v1a verifies with the public key get_webhook shows')
  t.notOk(verifiesV1a({ ...msg!, body: msg!.body.replace('Signups', 'Signins') }, hook.public_key), 'not for a changed body')
})

t.test('signatures: v1a only, adding and dropping v1a, rotation keeps the key pair', async (t) => {
  const app = await buildTestApp(t, { config: privateOk })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service
  const rx = await receiver(t)
  const hook = await subscribe(app, key, ws.project.id, rx.url, ['memory.added'])
  t.match(await webhook(app, key, hook.id), { signatures: ['v1'], public_key: null }, 'the default: v1, no key pair')
  const patch = (payload: Record<string, unknown>) => app.inject({ method: 'PATCH', url: `/v1/webhooks/${hook.id}`, headers: bearer(key), payload })

  const onlyV1a = await patch({ signatures: ['v1a'] })
  expectStatus(t, onlyV1a, 200)
  const publicKey = onlyV1a.json().public_key as string
  t.match(publicKey, /^whpk_/)
  await app.inject({ method: 'POST', url: '/v1/tools/add_memory', headers: bearer(key), payload: { project: ws.project.id, content: 'one' } })
  t.equal(await app.webhooks.deliverDue(), 1)
  t.match(String(rx.got[0]!.headers['webhook-signature']), /^v1a,[^ ]+$/, 'v1a only: no v1 signature')
  t.ok(verifiesV1a(rx.got[0]!, publicKey))
  t.throws(() => new Verifier(hook.secret).verify(rx.got[0]!.body, rx.got[0]!.headers as Record<string, string>), 'no v1 to verify')

  t.equal((await patch({ signatures: ['v1', 'v1a'] })).json().public_key, publicKey, 'keeping v1a keeps the key pair (it is in the receivers\' trust lists)')
  const rotated = await app.inject({ method: 'POST', url: `/v1/webhooks/${hook.id}/rotate-secret`, headers: bearer(key) })
  t.equal(rotated.json().public_key, publicKey, 'rotating the secret keeps the key pair')
  await app.inject({ method: 'POST', url: '/v1/tools/add_memory', headers: bearer(key), payload: { project: ws.project.id, content: 'two' } })
  t.equal(await app.webhooks.deliverDue(), 1)
  t.equal(String(rx.got[1]!.headers['webhook-signature']).split(' ').length, 3, 'the new secret, the previous one, and v1a')
  t.ok(verifiesV1a(rx.got[1]!, publicKey))
  t.ok(new Verifier(rotated.json().secret).verify(rx.got[1]!.body, rx.got[1]!.headers as Record<string, string>))

  t.match((await patch({ signatures: ['v1'] })).json(), { signatures: ['v1'], public_key: null }, 'dropping v1a deletes the key pair')
  const again = (await patch({ signatures: ['v1', 'v1a'] })).json().public_key
  t.match(again, /^whpk_/)
  t.not(again, publicKey, 'choosing v1a again makes a new pair')

  for (const [signatures, path] of [[[], 'signatures'], [['v2'], 'signatures[0]'], [['v1', 'v1'], 'signatures']] as const) {
    const bad = await patch({ signatures })
    t.equal(bad.statusCode, 400, `${JSON.stringify(signatures)} refused`)
    t.match(bad.json().error, { code: 'invalid_arguments', details: [{ path }] })
  }
  t.equal((await webhook(app, key, hook.id)).public_key, again, 'a refused change changes nothing')
})
