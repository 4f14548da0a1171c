// No usable secret at rest (issue 26, item 5): after every kind of secret has been made — keys of
// each kind, console sessions, a key and a webhook secret made in the console whose show-once
// page was never opened, an OAuth client with a secret, codes and tokens, a webhook with a
// rotated signing secret — a dump of the database holds none of them, in any form, and nothing
// in it that looks like a credential authenticates. The dump is every table read with
// `select *` (on either backend) and, on PostgreSQL, pg_dump's output; both get the same checks.
//
// Then the server key's life: the seal itself (context-bound, tamper-evident), the key file,
// plaintext from an earlier version sealed at start, a refusal to start with the wrong key, a
// rotation with `growthdesk admin rotate-secrets-key`, and a lost key given up with
// --forget-unreadable.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { Webhook as Verifier } from 'standardwebhooks'
import { buildApp } from '../app.ts'
import type { Database } from '../config.ts'
import { main } from '../bin/cli.ts'
import { createKey, resetPassword } from '../bin/admin.ts'
import { rowsOf } from '../db/client.ts'
import { sql } from '../db/orm.ts'
import { decodeSecretsKey, sealContexts, SecretBox, SecretsKeyError } from '../db/secret-box.ts'
import { serverKeys } from '../plugins/secrets.ts'
import { addMember, bearer, freePort, seedWorkspace, TEST_SECRETS_KEY, testConfig, testDatabase } from './helpers/app.ts'
import { Agent } from './console/helpers.ts'
import { consent, REDIRECT } from './oauth/helpers.ts'
import { privateOk, receiver, subscribe, verifiesV1a } from './helpers/webhooks.ts'

async function call(app: FastifyInstance, key: string, method: 'GET' | 'POST', url: string, payload?: object) {
  const res = await app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) })
  return { status: res.statusCode, body: res.json() as any }
}

/** Every table of every schema, read with `select *` as JSON text: what a dump by query holds. */
async function selectDump(app: FastifyInstance): Promise<string> {
  const tables = rowsOf<{ s: string; n: string }>(await app.db.execute(sql`
    select table_schema as s, table_name as n from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema') order by 1, 2`))
  const parts: string[] = []
  for (const { s, n } of tables) {
    const ident = `"${s.replace(/"/g, '""')}"."${n.replace(/"/g, '""')}"`
    const [row] = rowsOf<{ rows: string }>(await app.db.execute(sql.raw(`select coalesce(json_agg(t)::text, '[]') as rows from ${ident} t`)))
    parts.push(`-- ${s}.${n}\n${row!.rows}`)
  }
  return parts.join('\n')
}

/** pg_dump's output for the database, or the reason it cannot be had. */
function pgDump(database: Database): { text: string } | { skip: string } {
  if (database.kind !== 'postgres') return { skip: 'pg_dump needs PostgreSQL (set DATABASE_URL)' }
  const candidates = [process.env.PG_DUMP, 'pg_dump', '/usr/lib/postgresql/15/bin/pg_dump'].filter((p): p is string => Boolean(p))
  for (const bin of candidates) {
    const r = spawnSync(bin, ['--no-owner', '--no-privileges', database.url], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
    if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') continue
    if (r.status !== 0) throw new Error(`${bin} failed: ${r.stderr || r.error?.message}`)
    return { text: r.stdout }
  }
  return { skip: 'pg_dump is not installed (PG_DUMP names it elsewhere)' }
}

/** Anything in the text shaped like a growthdesk credential (key, token, code, client secret). */
const credentialsIn = (text: string) => [...new Set(text.match(/gd[a-z]_[0-9A-Za-z]{38}/g) ?? [])]

/**
 * Whether a value works as a credential anywhere: a bearer key or token on the tools API and the
 * project-side API, a refresh token or code at the token endpoint, a client secret with its client.
 */
interface ProbeContext { projectId: string; clientId: string; clientSecret: string; verifier: string }

async function works(app: FastifyInstance, url: string, value: string, ctx: ProbeContext): Promise<string | null> {
  // A link token (an invitation's gdv_…, a password reset's gdp_…) works when its page opens.
  for (const page of ['/console/invite/', '/console/reset/']) {
    const res = await app.inject({ method: 'GET', url: `${page}${encodeURIComponent(value)}` })
    if (res.statusCode === 200) return `GET ${page}… opened its page`
  }
  for (const [method, path] of [['GET', '/v1/tools'], ['GET', `/api/v1/mcp/projects/${ctx.projectId}/daily-ops`], ['POST', '/v1/events']] as const) {
    const res = await app.inject({ method, url: path, headers: bearer(value), ...(method === 'POST' ? { payload: { events: [] } } : {}) })
    if (res.statusCode !== 401) return `${method} ${path} answered ${res.statusCode}`
  }
  const client = { client_id: ctx.clientId, client_secret: ctx.clientSecret }
  const tries: [string, Record<string, string>][] = [
    ['a refresh token', { ...client, grant_type: 'refresh_token', refresh_token: value }],
    ['a code (with the right PKCE verifier)', { ...client, grant_type: 'authorization_code', code: value, redirect_uri: REDIRECT, code_verifier: ctx.verifier }],
    ['the client secret', { ...client, client_secret: value, grant_type: 'refresh_token', refresh_token: 'gdr_none' }],
  ]
  for (const [as, form] of tries) {
    const res = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) })
    const { error } = (await res.json()) as { error?: string }
    if (res.status === 200) return `/oauth/token took it as ${as}`
    // A wrong client secret is invalid_client; a right one gets as far as the (unknown) refresh token.
    if (as === 'the client secret' && error !== 'invalid_client') return `/oauth/token took it as ${as} (${error})`
  }
  return null
}

/** The forms a secret could take in a dump: as given, its random part, a webhook key's bytes in base64, base64url and hex. */
function formsOf(what: string, value: string): [string, string][] {
  const forms: [string, string][] = [[what, value]]
  const key = /^gd[a-z]_([0-9A-Za-z]{32})[0-9A-Za-z]{6}$/.exec(value)
  if (key) forms.push([`${what}, its random part`, key[1]!])
  if (value.startsWith('whsk_')) {
    const bytes = Buffer.from(value.slice(5), 'base64')
    forms.push([`${what}, base64`, value.slice(5)], [`${what}, its seed in base64`, bytes.subarray(0, 32).toString('base64')], [`${what}, its seed in base64url`, bytes.subarray(0, 32).toString('base64url')], [`${what}, its seed in hex`, bytes.subarray(0, 32).toString('hex')])
  }
  if (value.startsWith('whsec_')) {
    const bytes = Buffer.from(value.slice(6), 'base64')
    forms.push([`${what}, base64`, value.slice(6)], [`${what}, base64url`, bytes.toString('base64url')], [`${what}, hex`, bytes.toString('hex')])
  }
  return forms
}

t.test('a dump of the database holds no secret that works', async (t) => {
  const database = await testDatabase(t)
  const rx = await receiver(t)
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const app = await buildApp({ config: testConfig(database, { ...privateOk, publicUrl: url, port }), logger: false, checkOutputs: true })
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port })

  /** Every plaintext secret made below, by what it is. */
  const secrets = new Map<string, string>()
  const ws = await seedWorkspace(app)
  secrets.set('the owner\'s password', ws.user.password)
  for (const [kind, key] of Object.entries(ws.keys)) secrets.set(`the ${kind} key`, key)
  const member = await addMember(app, ws.project.id, 'reviewer')
  secrets.set('a member\'s password', member.user.password).set('a member\'s MCP key', member.keys.mcp).set('a member\'s service key', member.keys.service)
  const cliKey = await createKey(app, { email: member.user.email, kind: 'ingest', project: ws.project.id, name: 'cli', expiresAt: new Date(Date.now() + 86_400_000) })
  secrets.set('an ingest key made by admin create-key', cliKey.key)

  // A webhook over REST, its secret rotated once: the current and the previous one both sign.
  const hook = await subscribe(app, ws.keys.service, ws.project.id, rx.url, ['memory.added'])
  const rotated = await call(app, ws.keys.service, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`)
  t.equal(rotated.status, 200)
  secrets.set('a webhook\'s previous signing secret', hook.secret).set('a webhook\'s signing secret', rotated.body.secret)
  // A webhook signing with v1a: its ed25519 signing key is never shown; opened here from the table to look for it.
  const asymmetric = await call(app, ws.keys.service, 'POST', '/v1/webhooks', { project: ws.project.id, url: rx.url, events: ['memory.added'], signatures: ['v1a'] })
  t.equal(asymmetric.status, 201)
  const [stored] = rowsOf<{ signing_key: string }>(await app.db.execute(sql`select signing_key from webhooks where id = ${asymmetric.body.id}`))
  t.match(stored!.signing_key, /^enc:v1:/, 'the signing key is stored sealed')
  secrets.set('a webhook\'s ed25519 signing key', app.secrets.box.open(stored!.signing_key, sealContexts.webhookSigningKey(asymmetric.body.id)))

  // OAuth: a confidential client, a code never redeemed, and a grant whose refresh token was rotated.
  const register = await fetch(`${url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Dump test', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' }),
  })
  t.equal(register.status, 201)
  const client = (await register.json()) as { client_id: string; client_secret: string }
  t.match(client.client_secret, /^gdx_/)
  secrets.set('an OAuth client secret', client.client_secret)
  const verifier = randomBytes(32).toString('base64url')
  const authorizeUrl = () => {
    const u = new URL(`${url}/oauth/authorize`)
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 's', resource: `${url}/mcp` })) u.searchParams.set(k, v)
    return u.toString()
  }
  const codeOf = async () => new URL((await consent(url, authorizeUrl(), ws.user.email, ws.user.password)).location!).searchParams.get('code')!
  const token = async (form: Record<string, string>) => {
    const res = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: client.client_id, client_secret: client.client_secret, ...form }) })
    t.equal(res.status, 200, `token endpoint: ${form.grant_type}`)
    return (await res.json()) as { access_token: string; refresh_token: string }
  }
  secrets.set('an OAuth code never redeemed', await codeOf())
  const redeemed = await codeOf()
  const first = await token({ grant_type: 'authorization_code', code: redeemed, code_verifier: verifier, redirect_uri: REDIRECT })
  const second = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token })
  secrets.set('an OAuth code, redeemed', redeemed)
    .set('an OAuth access token', first.access_token).set('an OAuth refresh token, rotated (it still works in its grace window)', first.refresh_token)
    .set('an OAuth access token, from a refresh', second.access_token).set('an OAuth refresh token', second.refresh_token)

  // The console: a signed-in session that made a webhook and a key, and never opened the pages
  // that show them (their secrets wait in the stored session), and another one that is idle.
  const owner = new Agent(app, '10.0.26.1')
  await owner.signIn(ws.user.email, ws.user.password)
  const webhooksPage = `/console/projects/${ws.project.slug}/webhooks`
  t.equal((await owner.submit(webhooksPage, webhooksPage, { url: rx.url, events: 'memory.added' })).statusCode, 303, 'a webhook made in the console')
  const made = await owner.submit('/console/keys', '/console/keys', { kind: 'service', name: 'never shown' })
  t.equal(made.headers.location, '/console/keys/new', 'a key made in the console; its page is not opened')
  const idle = new Agent(app, '10.0.26.2')
  await idle.signIn(member.user.email, member.user.password)
  for (const [who, agent] of [['the owner', owner], ['a member', idle]] as const) {
    const cookie = decodeURIComponent(agent.cookies.get('gd_session')!)
    secrets.set(`${who}'s session cookie`, cookie).set(`${who}'s session id`, cookie.replace(/\.[^.]*$/, ''))
  }
  // Team links (issue 26): an invitation by tool, one made in the console whose page was never
  // opened (its link waits in the session, sealed), a reset link by the CLI and one an owner made
  // in the console, also never shown.
  const invited = await call(app, ws.keys.service, 'POST', '/v1/tools/invite_member', { email: 'dump-invitee@example.com', projects: [{ project: ws.project.id, role: 'reviewer' }] })
  t.equal(invited.status, 200, 'an invitation made with a tool')
  secrets.set('an invitation link\'s token (made by a tool)', new URL(invited.body.result.link).pathname.split('/').pop()!)
  const reset = await resetPassword(app, { email: member.user.email })
  secrets.set('a password-reset link\'s token (admin reset-password)', new URL(reset.link).pathname.split('/').pop()!)
  t.equal((await owner.submit('/console/members', '/console/members/invite', { email: 'dump-console@example.com', [`role_${ws.project.id}`]: 'viewer' })).headers.location, '/console/members/invited', 'an invitation made in the console; its page is not opened')
  t.equal((await owner.submit('/console/members', '/console/members/reset-link', { email: member.user.email, back: '/console/members' })).statusCode, 303, 'a reset link made in the console; its page is not opened')
  secrets.set('the server key, base64', TEST_SECRETS_KEY.toString('base64')).set('the server key, hex', TEST_SECRETS_KEY.toString('hex'))

  // The dumps, taken now: the console's secrets are still waiting for their pages.
  const dumps: [string, string][] = [['select * of every table', await selectDump(app)]]
  const dumped = pgDump(database)
  if ('text' in dumped) dumps.push(['pg_dump', dumped.text])

  // Only now are the waiting secrets read from their pages, to look for them in the dumps taken before.
  const shownKey = /id="new-key">([^<]+)</.exec((await owner.get('/console/keys/new')).body)?.[1]
  const shownSecret = /id="new-webhook-secret">([^<]+)</.exec((await owner.get(webhooksPage)).body)?.[1]
  const tokenOf = (body: string, id: string) => new RegExp(`id="${id}">[^<]*/(gd[a-z]_[0-9A-Za-z]{38})<`).exec(body)?.[1]
  const shownInvitation = tokenOf((await owner.get('/console/members/invited')).body, 'invitation-link')
  const shownReset = tokenOf((await owner.get('/console/members/reset-link?back=/console/members')).body, 'reset-link')
  t.match(shownInvitation, /^gdv_/, 'the console invitation link was still waiting in the session at the dump')
  t.match(shownReset, /^gdp_/, 'and so was the console reset link')
  secrets.set('a console invitation link whose page was not opened at the dump', shownInvitation!).set('a console reset link whose page was not opened at the dump', shownReset!)
  t.match(shownKey, /^gds_/, 'the console key was still waiting in the session at the dump')
  t.match(shownSecret, /^whsec_/, 'and so was the console webhook\'s secret')
  secrets.set('a console key whose page was not opened at the dump', shownKey!).set('a console webhook secret whose page was not opened at the dump', shownSecret!)

  const ctx: ProbeContext = { projectId: ws.project.id, clientId: client.client_id, clientSecret: client.client_secret, verifier }
  // The probe itself, on a text that does hold credentials: it finds them, and sees each kind work
  // (this spends the unredeemed code and the refresh token: the dumps were taken before).
  const planted = credentialsIn([...secrets.values()].join('\n'))
  t.equal(planted.length, [...secrets.values()].filter((v) => /^gd[a-z]_/.test(v)).length, `the probe finds the ${planted.length} credentials in a text that holds them`)
  for (const value of [secrets.get('an invitation link\'s token (made by a tool)')!, shownReset!, ws.keys.service, ws.keys.mcp, ws.keys.ingest, second.access_token, shownKey!, secrets.get('an OAuth code never redeemed')!, second.refresh_token, client.client_secret]) {
    t.ok(await works(app, url, value, ctx), `the probe sees that ${value.slice(0, 4)}… works`)
  }

  const forms = [...secrets].flatMap(([what, value]) => formsOf(what, value))
  for (const [name, text] of dumps) {
    t.test(`${name}: no secret, in any form, and nothing that authenticates`, async (t) => {
      t.ok(text.includes(hook.id) && text.includes('enc:v1:'), 'the dump is of the right database, with sealed values in it')
      const found = forms.filter(([, value]) => text.includes(value))
      t.same(found.map(([what]) => what), [], `none of ${forms.length} forms of ${secrets.size} secrets is in it`)
      const candidates = credentialsIn(text)
      for (const value of candidates) t.equal(await works(app, url, value, ctx), null, `${value.slice(0, 8)}… from the dump authenticates nowhere`)
      t.equal(candidates.length, 0, 'nothing in it even looks like a credential')
      // No webhook secret in any form, and no stored value opens without the server key.
      const whsec = text.match(/whsec_[A-Za-z0-9+/=]+/g) ?? []
      t.same(whsec, [], 'no whsec_ value')
      t.same(text.match(/whsk_[A-Za-z0-9+/=]+/g) ?? [], [], 'no whsk_ value')
    })
  }
  if ('skip' in dumped) t.test('pg_dump: no secret, in any form, and nothing that authenticates', { skip: dumped.skip }, async () => {})

  // What the dump lacked does work: the waiting key authenticates, the webhook secrets sign.
  t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(shownKey!) })).statusCode, 200, 'the console key works')
  await call(app, ws.keys.service, 'POST', '/v1/tools/add_memory', { project: ws.project.id, content: 'signed' })
  t.equal(await app.webhooks.deliverDue(), 3, 'one message to each webhook')
  const bySecret = (secret: string) => rx.got.filter((r) => {
    try {
      return Boolean(new Verifier(secret).verify(r.body, r.headers as Record<string, string>))
    } catch {
      return false
    }
  }).length
  t.equal(bySecret(rotated.body.secret), 1, 'the REST webhook\'s message verifies with its secret')
  t.equal(bySecret(hook.secret), 1, '…and, during the overlap, with the previous one')
  t.equal(bySecret(shownSecret!), 1, 'the console webhook\'s message verifies with the secret its page showed')
  t.equal(rx.got.filter((r) => verifiesV1a(r, asymmetric.body.public_key)).length, 1, 'the v1a webhook\'s message verifies with its public key')
})

t.test('the seal: AES-256-GCM bound to its record, opened by the key that sealed it', async (t) => {
  const [k1, k2] = [randomBytes(32), randomBytes(32)]
  const box = new SecretBox(k1)
  const sealed = box.seal('whsec_c2VjcmV0', sealContexts.webhook('whk_a'))
  t.match(sealed, new RegExp(`^enc:v1:${box.keyId}:[A-Za-z0-9+/]+=*$`))
  t.not(box.seal('whsec_c2VjcmV0', sealContexts.webhook('whk_a')), sealed, 'a fresh IV each time')
  t.equal(box.open(sealed, sealContexts.webhook('whk_a')), 'whsec_c2VjcmV0')
  t.throws(() => box.open(sealed, sealContexts.webhook('whk_b')), /altered or belongs to another record/, 'another record\'s context does not open it')
  const raw = Buffer.from(sealed.split(':')[3]!, 'base64')
  raw[20] = raw[20]! ^ 1
  t.throws(() => box.open(`enc:v1:${box.keyId}:${raw.toString('base64')}`, sealContexts.webhook('whk_a')), /altered/, 'a changed byte does not open')
  t.throws(() => new SecretBox(k2).open(sealed, sealContexts.webhook('whk_a')), SecretsKeyError, 'another key does not')
  const rotated = new SecretBox(k2, [k1])
  t.equal(rotated.open(sealed, sealContexts.webhook('whk_a')), 'whsec_c2VjcmV0', 'a previous key still opens what it sealed')
  t.match(rotated.seal('x', 'c'), `enc:v1:${rotated.keyId}:`, 'the current key seals')
  t.not(rotated.keyId, box.keyId)
  t.throws(() => box.open('whsec_plain', 'c'), /Not a sealed value/)
  t.notMatch(box.keyId, k1.toString('hex').slice(0, 12), 'the key id is not the key')
  t.same(decodeSecretsKey(k1.toString('hex')), k1)
  t.same(decodeSecretsKey(`${k1.toString('base64')}\n`), k1, 'a key file\'s line')
  t.equal(decodeSecretsKey(randomBytes(31).toString('hex')), null)
})

t.test('the key file: made once with mode 0600 and read back; a bad one stops the start', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-secrets-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const keyFile = path.join(dir, 'data', 'secrets.key')
  const made = serverKeys({ key: null, keyFile, previous: [] })
  t.equal(made.created, keyFile, 'made at the first start')
  t.equal(fs.statSync(keyFile).mode & 0o777, 0o600, 'readable by its owner only')
  t.match(fs.readFileSync(keyFile, 'utf8'), /^[A-Za-z0-9+/]{43}=\n$/, 'one line of base64')
  const again = serverKeys({ key: null, keyFile, previous: [] })
  t.same(again.current, made.current, 'the same key at the next start')
  t.notOk(again.created)
  const env = randomBytes(32)
  t.same(serverKeys({ key: env, keyFile, previous: [] }).previous, [made.current], 'with SECRETS_KEY set, the file\'s key only opens (the move to the variable)')
  t.same(serverKeys({ key: null, keyFile: null, previous: [] }).source, 'a key made for this process only')
  fs.writeFileSync(keyFile, 'not a key\n')
  t.throws(() => serverKeys({ key: null, keyFile, previous: [] }), new SecretsKeyError(`The secrets key file ${keyFile} does not hold a 32-byte key in base64 or hex.`))
})

t.test('plaintext from an earlier version is sealed at the next start', async (t) => {
  const database = await testDatabase(t)
  const rx = await receiver(t)
  const config = testConfig(database, privateOk)
  const before = await buildApp({ config, logger: false })
  const ws = await seedWorkspace(before)
  const hook = await subscribe(before, ws.keys.service, ws.project.id, rx.url, ['memory.added'])
  // The state migration 0013 finds: plaintext secrets (its constraints come NOT VALID on top),
  // and a session keeping a new key in plaintext for its show-once page.
  await before.db.execute(sql`alter table webhooks drop constraint webhooks_secret_sealed_check`)
  await before.db.execute(sql`alter table app_secrets drop constraint app_secrets_value_sealed_check`)
  await before.db.execute(sql`update webhooks set secret = ${hook.secret}, previous_secret = 'whsec_b2xk', previous_secret_until = now() - interval '1 day' where id = ${hook.id}`)
  const cookieSecret = 'c'.repeat(64)
  await before.db.execute(sql`update app_secrets set value = ${cookieSecret} where name = 'cookie_secret'`)
  await before.db.execute(sql`insert into sessions (sid, data, expires_at) values ('legacy', ${JSON.stringify({ userId: ws.user.id, newKey: { page: 'keys', key: ws.keys.mcp, name: 'old', at: Date.now() } })}::jsonb, now() + interval '1 hour')`)
  await before.db.execute(sql.raw('alter table webhooks add constraint webhooks_secret_sealed_check check ("secret" like \'enc:%\' and ("previous_secret" is null or "previous_secret" like \'enc:%\')) not valid'))
  await before.db.execute(sql.raw('alter table app_secrets add constraint app_secrets_value_sealed_check check ("value" like \'enc:%\') not valid'))
  await t.rejects(before.db.execute(sql`update webhooks set secret = 'whsec_eA==' where id = ${hook.id}`), 'a NOT VALID constraint already refuses a new plaintext write')
  await before.close()

  const app = await buildApp({ config, logger: false })
  t.teardown(() => app.close())
  const dump = await selectDump(app)
  t.notOk(dump.includes(hook.secret) || dump.includes(cookieSecret) || dump.includes('whsec_b2xk'), 'the plaintext is gone')
  t.notOk(dump.includes(ws.keys.mcp), 'and so is the key the old session kept')
  const [row] = rowsOf<{ secret: string; previous_secret: string }>(await app.db.execute(sql`select secret, previous_secret from webhooks where id = ${hook.id}`))
  t.equal(app.secrets.box.open(row!.secret, sealContexts.webhook(hook.id)), hook.secret, 'sealed, the same secret')
  t.equal(app.secrets.box.open(row!.previous_secret, sealContexts.webhook(hook.id)), 'whsec_b2xk', 'a previous secret past its overlap is sealed too (a receiver may still accept it)')
  const [session] = rowsOf<{ data: Record<string, unknown> }>(await app.db.execute(sql`select data from sessions where sid = 'legacy'`))
  t.same(session!.data, { userId: ws.user.id }, 'the old show-once slot is dropped, the session kept')
  const constraints = rowsOf<{ conname: string; convalidated: boolean }>(await app.db.execute(sql`select conname, convalidated from pg_constraint where conname like '%sealed_check' order by 1`))
  t.same(constraints, [{ conname: 'app_secrets_value_sealed_check', convalidated: true }, { conname: 'webhooks_secret_sealed_check', convalidated: true }, { conname: 'webhooks_signing_key_sealed_check', convalidated: true }], 'the constraints are validated')
  await call(app, ws.keys.service, 'POST', '/v1/tools/add_memory', { project: ws.project.id, content: 'after the upgrade' })
  t.equal(await app.webhooks.deliverDue(), 1)
  t.ok(new Verifier(hook.secret).verify(rx.got[0]!.body, rx.got[0]!.headers as Record<string, string>), 'signed with the secret the receiver has')
})

t.test('the server key: refused when wrong, rotated by the CLI, given up when lost', async (t) => {
  const database = await testDatabase(t)
  const rx = await receiver(t)
  const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-secrets-'))
  t.teardown(() => fs.rmSync(keyDir, { recursive: true, force: true }))
  const [k1, k2, k3] = [randomBytes(32), randomBytes(32), randomBytes(32)]
  const withKey = (key: Buffer, previous: Buffer[] = []) => testConfig(database, { ...privateOk, secrets: { key, keyFile: null, previous } })
  const cli = async (env: Record<string, string>, ...argv: string[]) => {
    let stdout = ''
    let stderr = ''
    // DATA_DIR: the embedded database's folder, or (PostgreSQL) a folder without a key file.
    const where = database.kind === 'postgres' ? { DATABASE_URL: database.url, DATA_DIR: keyDir } : { DATA_DIR: database.dataDir! }
    const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, env: { ...where, ...env } })
    return { code, stdout, stderr }
  }

  const first = await buildApp({ config: withKey(k1), logger: false })
  const ws = await seedWorkspace(first)
  const hook = await subscribe(first, ws.keys.service, ws.project.id, rx.url, ['memory.added'])
  const rotated = await call(first, ws.keys.service, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`)
  const secret = rotated.body.secret as string
  const withV1a = await first.inject({ method: 'PATCH', url: `/v1/webhooks/${hook.id}`, headers: bearer(ws.keys.service), payload: { signatures: ['v1', 'v1a'] } })
  const publicKey = withV1a.json().public_key as string
  const k1Id = first.secrets.box.keyId
  await first.close()

  const wrong = await buildApp({ config: withKey(k2), logger: false }).then(() => undefined, (err: unknown) => err)
  t.type(wrong, SecretsKeyError, 'another key: the start is refused')
  t.match((wrong as Error).message, new RegExp(`sealed with key id ${k1Id} \\(previous webhook signing secrets, the console's cookie secret, webhook ed25519 signing keys, webhook signing secrets\\)`), 'naming the key id it needs and what it seals')
  t.match((wrong as Error).message, /SECRETS_KEY_PREVIOUS/)

  const rotation = await cli({ SECRETS_KEY: k2.toString('base64'), SECRETS_KEY_PREVIOUS: k1.toString('hex') }, 'admin', 'rotate-secrets-key', '--json')
  t.equal(rotation.code, 0, rotation.stderr)
  const report = JSON.parse(rotation.stdout)
  t.match(report, { key_id: new SecretBox(k2).keyId, resealed: 3, expiredCleared: 0, forgotten: null }, 'the webhook\'s secrets, its signing key and the cookie secret sealed again')

  const second = await buildApp({ config: withKey(k2), logger: false })
  const dump = await selectDump(second)
  t.notMatch(dump, `enc:v1:${k1Id}:`, 'nothing is sealed with the old key any more')
  await call(second, ws.keys.service, 'POST', '/v1/tools/add_memory', { project: ws.project.id, content: 'after the rotation' })
  t.equal(await second.webhooks.deliverDue(), 1)
  t.ok(new Verifier(secret).verify(rx.got[0]!.body, rx.got[0]!.headers as Record<string, string>), 'the webhook\'s secret is unchanged: receivers change nothing')
  t.ok(new Verifier(hook.secret).verify(rx.got[0]!.body, rx.got[0]!.headers as Record<string, string>), 'and its previous one still signs in the overlap')
  t.ok(verifiesV1a(rx.got[0]!, publicKey), 'its ed25519 key is unchanged too: v1a verifies with the same public key')

  // A secret this instance cannot open, written behind its back: that message fails alone, unsent.
  await second.db.execute(sql`update webhooks set secret = ${new SecretBox(randomBytes(32)).seal('whsec_eA==', sealContexts.webhook(hook.id))} where id = ${hook.id}`)
  await call(second, ws.keys.service, 'POST', '/v1/tools/add_memory', { project: ws.project.id, content: 'unreadable' })
  t.equal(await second.webhooks.deliverDue(), 1)
  t.equal(rx.got.length, 1, 'nothing was sent')
  const log = await call(second, ws.keys.service, 'GET', `/v1/webhooks/${hook.id}/deliveries`)
  t.match(log.body.items[0], { status: 'pending', last_error: /signing secret could not be opened/ }, 'the attempt failed, to be tried again')
  await second.close()

  // The key is lost (k2 forgotten, k3 set): refused, then given up with --forget-unreadable.
  await t.rejects(buildApp({ config: withKey(k3), logger: false }), SecretsKeyError)
  const plain = await cli({ SECRETS_KEY: k3.toString('base64') }, 'admin', 'rotate-secrets-key')
  t.equal(plain.code, 1, 'without --forget-unreadable the command refuses too')
  t.match(plain.stderr, /^growthdesk: The database holds secrets sealed with key id .*--forget-unreadable/)
  const forgot = await cli({ SECRETS_KEY: k3.toString('base64') }, 'admin', 'rotate-secrets-key', '--forget-unreadable')
  t.equal(forgot.code, 0, forgot.stderr)
  t.match(forgot.stdout, `Forgotten: 1 webhook secret(s) — rotate them: ${hook.id}; 1 previous webhook secret(s); cookie_secret made again. New ed25519 key pairs (give receivers the new public key): ${hook.id}.`, 'the webhooks to rotate are named')
  const third = await buildApp({ config: withKey(k3), logger: false })
  t.teardown(() => third.close())
  const fresh = await call(third, ws.keys.service, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`)
  t.equal(fresh.status, 200, 'the owner rotates the forgotten secret')
  await call(third, ws.keys.service, 'POST', '/v1/tools/add_memory', { project: ws.project.id, content: 'after the loss' })
  t.equal(await third.webhooks.deliverDue(), 1)
  const last = rx.got.at(-1)!
  t.ok(new Verifier(fresh.body.secret).verify(last.body, last.headers as Record<string, string>), 'messages are signed with the new secret')
  t.not(fresh.body.public_key, publicKey, 'a new key pair')
  t.ok(verifiesV1a(last, fresh.body.public_key), 'v1a verifies with the new public key')
})

t.test('two instances with different keys on one PostgreSQL: the second refuses to start', {
  skip: !process.env.DATABASE_URL || process.env.DATABASE_URL === 'memory://' ? 'PostgreSQL only (set DATABASE_URL): PGlite has one process' : false,
}, async (t) => {
  const database = await testDatabase(t)
  const a = await buildApp({ config: testConfig(database, { secrets: { key: randomBytes(32), keyFile: null, previous: [] } }), logger: false })
  t.teardown(() => a.close())
  await t.rejects(buildApp({ config: testConfig(database, { secrets: { key: randomBytes(32), keyFile: null, previous: [] } }), logger: false }), SecretsKeyError, 'a second key file of its own would seal what the first cannot open')
})
