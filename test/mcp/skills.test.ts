// Skills over MCP: SKILL.md and the growth skill through the skills extension
// (io.modelcontextprotocol/skills): skills/list and skills/get with each file's sha256 digest and
// size, checked by the SDK's own host side (SkillsClient verifies every file it reads), and the
// very bytes GET /SKILL.md and GET /skills/growth/SKILL.md serve, in both eras.
import t from 'tap'
import { createHash } from 'node:crypto'
import { Client as ClientV2, ProtocolError, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'

const { app, url } = await listenTestApp(t)
const ws = await seedWorkspace(app)
const http = async (path: string) => (await app.inject({ method: 'GET', url: path })).body
const documents = { 'skill://growthdesk/SKILL.md': await http('/SKILL.md'), 'skill://growthdesk-growth/SKILL.md': await http('/skills/growth/SKILL.md') }
const digest = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`

const modern = new ClientV2({ name: 'skills-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
await modern.connect(new TransportV2(new URL(`${url}/mcp`), { requestInit: { headers: bearer(ws.keys.service) } }))
t.teardown(() => modern.close())
const legacy = new ClientV1({ name: 'skills-v1', version: '1.0.0' })
await legacy.connect(new TransportV1(new URL(`${url}/mcp`), { requestInit: { headers: bearer(ws.keys.mcp) } }))
t.teardown(() => legacy.close())

t.test('2026-07-28: skills/list returns both skills, each file with its digest and size; the SDK verifies them', async (t) => {
  const skills = new SkillsClient(modern)
  t.ok(skills.supported, 'the server declares io.modelcontextprotocol/skills')
  const listing = await skills.list()
  t.strictSame(listing.skills.map((s) => s.uri).sort(), Object.keys(documents).sort(), 'both skills')
  t.equal(listing.ttlMs, 300_000, 'caching hints')
  t.equal(listing.cacheScope, 'public')
  for (const skill of listing.skills) {
    const text = documents[skill.uri as keyof typeof documents]
    t.strictSame(skill.resources, [{ uri: skill.uri, digest: digest(text), size: Buffer.byteLength(text) }], `${skill.uri}: the digest and size of the HTTP document`)
    t.equal(skill.frontmatter.name, skill.uri.split('/')[2], `${skill.uri}: its name is its folder`)
    t.match(skill.frontmatter.description, /\S/, `${skill.uri}: described`)
    const file = await skills.read(skill)
    t.equal(file.verified, true, `${skill.uri}: size and digest check out`)
    t.equal(file.text, text, `${skill.uri}: the very text of the HTTP document`)
    const got = await skills.get(skill.uri)
    t.strictSame(got.skill, skill, `${skill.uri}: skills/get, the same entry`)
    t.equal(got.ttlMs, 300_000)
  }
  const unknown = await skills.get('skill://nope/SKILL.md').then(() => null, (e: unknown) => e)
  t.ok(ProtocolError.isInstance(unknown), 'an unknown skill is a protocol error')
  t.equal((unknown as ProtocolError).code, -32602)
})

t.test('2025-11-25: the extension is declared at initialize, and skills/list answers without caching fields', async (t) => {
  t.ok(legacy.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/skills'], 'declared')
  const listing = await legacy.request({ method: 'skills/list', params: {} }, ResultSchema) as { skills: { uri: string; resources: { digest: string }[] }[]; ttlMs?: number }
  t.strictSame(listing.skills.map((s) => s.uri).sort(), Object.keys(documents).sort())
  t.notOk('ttlMs' in listing, 'no 2026-07-28 fields')
  for (const skill of listing.skills) t.equal(skill.resources[0]!.digest, digest(documents[skill.uri as keyof typeof documents]))
  const bad = await legacy.request({ method: 'skills/get', params: { uri: 42 } }, ResultSchema).then(() => null, (e: { code?: number }) => e)
  t.equal(bad?.code, -32602, 'skills/get without a string uri: -32602')
  const cursor = await legacy.request({ method: 'skills/list', params: { cursor: 'x' } }, ResultSchema).then(() => null, (e: { code?: number }) => e)
  t.equal(cursor?.code, -32602, 'a cursor the server never gave: -32602')
})

t.test('the skills are the resources, read in both eras; the documents\' HTTP addresses are still read', async (t) => {
  for (const client of [modern, legacy] as const) {
    // The skills, beside the MCP App views (ui://, test/mcp/apps.test.ts).
    const resources = (await client.listResources()).resources.filter((r) => r.uri.startsWith('skill://'))
    t.strictSame(resources.map((r) => r.uri).sort(), Object.keys(documents).sort(), 'resources/list: the skills')
    for (const r of resources) {
      t.equal(r.mimeType, 'text/markdown')
      const read = await client.readResource({ uri: r.uri })
      t.equal((read.contents[0] as { text: string }).text, documents[r.uri as keyof typeof documents])
    }
    const old = await client.readResource({ uri: 'http://' + new URL(url).host + '/SKILL.md' })
    t.equal((old.contents[0] as { text: string }).text, documents['skill://growthdesk/SKILL.md'], 'the HTTP address of SKILL.md')
  }
  t.match(modern.getInstructions(), /skill:\/\/growthdesk\/SKILL\.md/, 'the instructions point to the skill')
})
