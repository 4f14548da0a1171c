// Similar opportunities (issue 28): submit_opportunity answers `similar` (at most 5 existing
// opportunities of the project, not merged, never itself, best first, scores 0–1), on a replay
// too; find_similar_opportunities by text or by event_id answers the same items over the project
// REST routes, /v1/tools and MCP, and refuses bad input the same way everywhere. With the demo
// data, a demo text with one word changed finds its original first.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { sql } from '../../db/orm.ts'
import { bearer, buildTestApp, fixedClock, PUBLIC_URL, seedWorkspace } from '../helpers/app.ts'
import { seedProject } from '../../bin/seed-demo.ts'
import { demoOpportunities } from '../../bin/demo-data.ts'
import { DEMO_OPPORTUNITIES } from '../../bin/seed-demo.ts'

interface Similar { event_id: string; score: number; key_information: string }
interface Answer { status: number; body: any }

async function tool(app: FastifyInstance, key: string, name: string, args: object): Promise<Answer> {
  const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: args })
  const body = res.json()
  return { status: res.statusCode, body: body.result ?? body }
}

async function mcp(app: FastifyInstance, key: string, name: string, args: object): Promise<Answer> {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp?toolsets=triage',
    headers: { host: new URL(PUBLIC_URL).host, ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  })
  const text = res.body.startsWith('{') ? res.body : /^data: (.*)$/m.exec(res.body)![1]!
  const { result } = JSON.parse(text) as { result: { isError?: boolean; content: { text: string }[]; structuredContent?: unknown } }
  if (!result.isError) return { status: 200, body: result.structuredContent }
  const body = JSON.parse(result.content[0]!.text)
  return { status: ({ invalid_arguments: 400, not_found: 404 } as Record<string, number>)[body.error.code] ?? 500, body }
}

function wellOrdered(t: Test, items: Similar[], label: string) {
  t.ok(items.length <= 5, `${label}: at most 5 (${items.length})`)
  for (const [i, s] of items.entries()) {
    t.ok(s.score >= 0 && s.score <= 1, `${label}: score ${s.score} in 0–1`)
    if (i > 0) t.ok(items[i - 1]!.score >= s.score, `${label}: best first`)
  }
}

const BASE = [
  'The CTO of a 40-person fintech asked on the community forum whether we support SSO and audit logs',
  'A newsletter with 12k product managers wants to feature tools for weekly growth reviews',
  'Usage of a 25-seat team dropped 60% after their champion left the company',
  'A podcast about indie SaaS invited our founder for an episode on growth loops',
  'Support tickets mention confusing pricing for annual plans',
]

t.test('similar at submit and find_similar_opportunities', async (t) => {
  const app = await buildTestApp(t, { now: fixedClock('2026-11-20T12:00:00.000Z') })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const key = ws.keys.service
  const project = ws.project.slug
  const submit = async (key_information: string, extra: Record<string, string> = {}, k = key, p = project) => {
    const res = await tool(app, k, 'submit_opportunity', { project: p, contribution_type: 'potential_user_opportunity', key_information, reason: 'r', suggested_action: 'a', ...extra })
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
    return res.body as { event_id: string; created: boolean; similar: Similar[] }
  }

  const base: string[] = []
  for (const text of BASE) {
    const r = await submit(text)
    base.push(r.event_id)
  }
  // The same texts in another project: never similar to this project's.
  for (const text of BASE) await submit(text, {}, other.keys.service, other.project.slug)

  t.test('one word changed: the original first; another project\'s never', async (t) => {
    const r = await submit('The CTO of a 40-person fintech asked on the community forum whether we support SAML and audit logs')
    t.ok(r.created)
    t.equal(r.similar[0]?.event_id, base[0], 'the original first')
    t.equal(r.similar[0]?.key_information, BASE[0])
    t.ok(r.similar[0]!.score > 0.7 && r.similar[0]!.score < 1, `a high score (${r.similar[0]!.score})`)
    t.notOk(r.similar.some((s) => s.event_id === r.event_id), 'never itself')
    wellOrdered(t, r.similar, 'one word')
    const foreign = (await tool(app, other.keys.service, 'list_opportunities', { project: other.project.slug })).body.items.map((o: { event_id: string }) => o.event_id)
    t.notOk(r.similar.some((s) => foreign.includes(s.event_id)), 'nothing of the other project')
    const unrelated = await submit('A Discord server for product analytics added us to its resources channel')
    t.same(unrelated.similar, [], 'nothing alike: none')
  })

  t.test('a cluster of 2,000 look-alikes: the near-duplicate still first', async (t) => {
    // Look-alikes stored before the original (a read in storage order meets them first), all
    // with the query's first 15 words: 900 near-identical to it (word Jaccard ≈ 0.8, most share
    // a strict band: more than the strict tier keeps) and 1,100 half-alike; none as alike as the
    // original (one word changed). Only ranking the band candidates by bands shared (similarIn)
    // keeps the original among those ranked.
    const head = 'Customers on the enterprise plan report that CSV exports of the billing dashboard time out'
    await app.db.execute(sql`insert into opportunities (id, project_id, contribution_type, key_information, reason, suggested_action, received_at)
      select 'opp_cluster' || lpad(g::text, 15, '0'), ${ws.project.id}, 'community_feedback',
             ${head} || case when g <= 900 then ' for accounts in Asia (ticket ' || g || ')' else ' (account ' || g || ')' end, 'r', 'a', now()
      from generate_series(1, 2000) g`)
    const original = await submit(`${head} for accounts in Europe since Tuesday`)
    const r = await submit(`${head} for accounts in Europe since Monday`)
    t.equal(r.similar[0]?.event_id, original.event_id, 'the original first')
    t.equal(r.similar.length, 5)
    wellOrdered(t, r.similar, 'cluster')
    const found = await tool(app, key, 'find_similar_opportunities', { project, event_id: r.event_id })
    t.equal(found.body.items[0].event_id, original.event_id, 'find_similar_opportunities: the original first')
    await app.db.execute(sql`delete from opportunities where id like 'opp_cluster%'`)
  })

  t.test('merged opportunities never appear', async (t) => {
    const dup = await submit('Usage of a 25 seat team dropped 60% after their champion left the company')
    t.equal(dup.similar[0]?.event_id, base[2])
    await app.db.execute(sql`update opportunities set merged_into = ${base[2]} where id = ${dup.event_id}`)
    const again = await submit('Usage of a 25-seat team dropped 60 percent after the champion left the company')
    t.same(again.similar.map((s) => s.event_id), [base[2]], 'the merged one is not there')
    const found = await tool(app, key, 'find_similar_opportunities', { project, event_id: base[2] })
    t.notOk(found.body.items.some((s: Similar) => s.event_id === dup.event_id), 'nor found by the tool')
    // A merged opportunity's own similar ones can still be asked for.
    const ofMerged = await tool(app, key, 'find_similar_opportunities', { project, event_id: dup.event_id })
    t.equal(ofMerged.status, 200)
    t.equal(ofMerged.body.items[0].event_id, base[2])
  })

  t.test('at most 5, scores in 0–1 descending; a replay answers those of the existing one', async (t) => {
    const variants = ['weekly', 'monthly', 'daily', 'quarterly', 'yearly', 'nightly', 'hourly']
    for (const v of variants) await submit(`A newsletter with 12k product managers wants to feature tools for ${v} growth reviews`)
    const r = await submit('A newsletter with 12k product managers wants to feature tools for growth reviews', { external_id: 'nl-1' })
    t.equal(r.similar.length, 5, 'five of eight alike')
    wellOrdered(t, r.similar, 'eight alike')
    const replay = await submit('anything else: the stored one counts', { external_id: 'nl-1' })
    t.equal(replay.created, false)
    t.equal(replay.event_id, r.event_id)
    t.same(replay.similar, r.similar, 'the same similar ones, of the existing one')
    t.notOk(replay.similar.some((s) => s.event_id === r.event_id), 'never itself')
  })

  t.test('find_similar_opportunities: by text and by event_id, identical over REST, /v1/tools and MCP', async (t) => {
    const text = 'a podcast about indie saas invited the founder for an episode about growth loops'
    const byTool = await tool(app, key, 'find_similar_opportunities', { project, text })
    t.equal(byTool.status, 200)
    t.equal(byTool.body.items[0].event_id, base[3])
    wellOrdered(t, byTool.body.items, 'by text')
    const byRest = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/similar`, headers: bearer(ws.keys.mcp), payload: { text } })
    t.equal(byRest.statusCode, 200)
    t.same(byRest.json(), byTool.body, 'POST …/opportunities/similar')
    t.same(await mcp(app, key, 'find_similar_opportunities', { project, text }), byTool, 'MCP')

    const byId = await tool(app, key, 'find_similar_opportunities', { project, event_id: base[1], limit: 3, min_score: 0.2 })
    t.equal(byId.status, 200)
    t.equal(byId.body.items.length, 3)
    t.notOk(byId.body.items.some((s: Similar) => s.event_id === base[1]), 'excludes itself')
    t.ok(byId.body.items.every((s: Similar) => s.score >= 0.2), 'min_score')
    const byIdRest = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${project}/opportunities/similar`, headers: bearer(ws.keys.mcp), payload: { event_id: base[1], limit: 3, min_score: 0.2 } })
    t.same(byIdRest.json(), byId.body, 'POST …/opportunities/similar by event_id')
    t.same(await mcp(app, key, 'find_similar_opportunities', { project, event_id: base[1], limit: 3, min_score: 0.2 }), byId, 'MCP')

    // A long text is compared on its first 1,000 characters, and answers.
    const long = await tool(app, key, 'find_similar_opportunities', { project, text: `${BASE[4]} `.repeat(200).slice(0, 10000) })
    t.equal(long.status, 200)
    t.equal(long.body.items[0]?.event_id, base[4], 'a long repetition of a text finds it')
    // A project-side key (MCP) may ask too.
    t.same(await mcp(app, ws.keys.mcp, 'find_similar_opportunities', { project, text }), byTool, 'a project-side key over MCP')
  })

  t.test('bad input: the same 400/404 everywhere, and nothing answered', async (t) => {
    const cases: [string, Record<string, unknown>, number, string][] = [
      ['both', { text: 'x', event_id: base[0]! }, 400, 'invalid_arguments'],
      ['neither', {}, 400, 'invalid_arguments'],
      ['limit 0', { text: 'x', limit: 0 }, 400, 'invalid_arguments'],
      ['limit 21', { text: 'x', limit: 21 }, 400, 'invalid_arguments'],
      ['min_score 0', { text: 'x', min_score: 0 }, 400, 'invalid_arguments'],
      ['empty text', { text: '' }, 400, 'invalid_arguments'],
      ['too long', { text: 'x'.repeat(10001) }, 400, 'invalid_arguments'],
      ['unknown event_id', { event_id: 'opp_doesNotExist123' }, 404, 'not_found'],
      ['another project\'s', { event_id: (await submit('A lead elsewhere', {}, other.keys.service, other.project.slug)).event_id }, 404, 'not_found'],
    ]
    for (const [label, args, status, code] of cases) {
      const viaTool = await tool(app, key, 'find_similar_opportunities', { project, ...args })
      t.equal(viaTool.status, status, `${label}: ${status}`)
      t.equal(viaTool.body.error?.code, code, `${label}: ${code}`)
      t.same(await mcp(app, key, 'find_similar_opportunities', { project, ...args }), viaTool, `${label}: the same over MCP`)
      const rest = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${project}/opportunities/similar`, headers: bearer(ws.keys.mcp), payload: args })
      t.equal(rest.statusCode, status, `${label}: REST ${status}`)
      t.same(rest.json(), viaTool.body, `${label}: the same over REST`)
    }
  })
})

t.test('with the demo data: a demo text with one word changed finds its original first', async (t) => {
  const app = await buildTestApp(t, { now: fixedClock('2026-03-10T12:00:00.000Z') })
  const ws = await seedWorkspace(app)
  await seedProject(app, { id: ws.project.id, slug: ws.project.slug, timezone: 'UTC' }, ws.user.id)
  const demo = demoOpportunities(ws.project.id, DEMO_OPPORTUNITIES)
  const texts = [...new Set(demo.map((o) => o.lead.info))]
  t.ok(texts.length >= 30)
  let firsts = 0
  for (const original of texts) {
    // One word changed: the longest word of the text (not a number) becomes another.
    const words = original.split(' ')
    const i = words.reduce((best, w, j) => (/^[A-Za-z]+$/.test(w) && w.length > words[best]!.length ? j : best), 0)
    const changed = words.map((w, j) => (j === i ? 'something' : w)).join(' ')
    const res = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${ws.project.slug}/opportunities`, headers: bearer(ws.keys.mcp), payload: { contribution_type: 'content_idea', key_information: changed, reason: 'r', suggested_action: 'a' } })
    t.equal(res.statusCode, 201)
    const { similar, event_id } = res.json() as { similar: Similar[]; event_id: string }
    if (similar[0]?.key_information === original) firsts++
    else t.fail(`"${changed}": the original is not first (${JSON.stringify(similar.slice(0, 2))})`)
    // Not found by the next ones: it would be their original's twin.
    await app.db.execute(sql`delete from opportunities where id = ${event_id}`)
  }
  t.equal(firsts, texts.length, `${firsts} of ${texts.length} originals first`)
})
