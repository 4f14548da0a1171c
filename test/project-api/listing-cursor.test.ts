// The listing's cursor (`after` = a page's `next_cursor`): walking every page with it gives the
// same items as page numbers, in order, including ties on received_at and times that differ only
// in microseconds; it stays on course while opportunities arrive; a page number near the end
// (read from the end) is the page the cursor reaches; a bad cursor is a 400 on every surface.
import t from 'tap'
import { sql } from '../../db/orm.ts'
import { bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'

interface Page {
  items: { event_id: string; received_at: string; status: string }[]
  page: number
  page_size: number
  total: number
  total_pages: number
  next_cursor: string | null
}

t.test('cursor paging of the opportunities listing', async (t) => {
  const clock = fixedClock('2026-11-18T08:00:00Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const url = `/api/v1/mcp/projects/${project}/opportunities`

  const get = (query: string) => app.inject({ method: 'GET', url: `${url}?${query}`, headers: bearer(ws.keys.mcp) })
  const page = async (query: string): Promise<Page> => {
    const res = await get(query)
    if (res.statusCode !== 200) throw new Error(`${query}: ${res.statusCode} ${res.body}`)
    return res.json() as Page
  }
  const submit = async (i: number, status?: string) => {
    const res = await app.inject({
      method: 'POST',
      url,
      headers: bearer(ws.keys.mcp),
      payload: { contribution_type: i % 2 ? 'content_idea' : 'potential_user_opportunity', key_information: `#${i}`, reason: 'r', suggested_action: 'a' },
    })
    if (res.statusCode !== 201) throw new Error(`submit: ${res.statusCode} ${res.body}`)
    const id = (res.json() as { event_id: string }).event_id
    if (status) await app.inject({ method: 'PATCH', url: `${url}/${id}/review`, headers: bearer(ws.keys.mcp), payload: { status } })
    return id
  }
  /** Every page, following next_cursor from the first. */
  const walk = async (query: string, onPage?: (p: Page) => Promise<void>) => {
    const pages: Page[] = []
    let p = await page(query)
    for (;;) {
      pages.push(p)
      await onPage?.(p)
      if (!p.next_cursor) return pages
      p = await page(`${query}&after=${p.next_cursor}`)
    }
  }
  /** Every page by number. */
  const numbered = async (query: string) => {
    const first = await page(`${query}&page=1`)
    const pages = [first]
    for (let n = 2; n <= first.total_pages; n++) pages.push(await page(`${query}&page=${n}`))
    return pages
  }

  // 31 opportunities: groups submitted at the same instant (ties broken by event_id) …
  for (let i = 0; i < 25; i++) {
    clock.set(`2026-11-1${Math.floor(i / 5)}T10:00:0${i % 3}Z`)
    await submit(i, i % 4 === 0 ? 'reviewing' : undefined)
  }
  // … and six whose times differ only in microseconds (a JavaScript Date would merge them).
  await app.db.execute(sql`
    insert into opportunities (id, project_id, contribution_type, key_information, reason, suggested_action, received_at)
    select 'opp_micro' || g, ${project}, 'potential_user_opportunity', 'micro ' || g, 'r', 'a',
           '2026-11-12T10:00:00.123Z'::timestamptz + (g % 3) * interval '1 microsecond'
    from generate_series(1, 6) g`)
  clock.set('2026-11-20T12:00:00Z')

  for (const query of ['page_size=4', 'page_size=5', 'page_size=1', 'page_size=100', 'status=reviewing&page_size=2', 'type=potential_user_opportunity&page_size=3', 'date=today']) {
    await t.test(`walking with the cursor = page by page (${query})`, async (t) => {
      const byCursor = await walk(query)
      const byNumber = await numbered(query)
      t.equal(byCursor.length, Math.max(1, byNumber[0]!.total_pages), 'as many pages')
      t.same(byCursor.map((p) => p.items.map((o) => o.event_id)), byNumber.map((p) => p.items.map((o) => o.event_id)), 'the same items on each page')
      t.same(byCursor.map((p) => p.page), byCursor.map((_, i) => i + 1), 'the pages are numbered as they are walked')
      t.ok(byCursor.every((p) => p.total === byNumber[0]!.total && p.total_pages === byNumber[0]!.total_pages), 'the same totals')
      t.same(byNumber.map((p) => p.next_cursor === null), byNumber.map((_, i) => i === byNumber.length - 1), 'next_cursor: on every page but the last')
      const ids = byCursor.flatMap((p) => p.items.map((o) => o.event_id))
      t.equal(new Set(ids).size, ids.length, 'no repeats')
    })
  }

  await t.test('every page number, from the start or from the end, is the page the cursor reaches', async (t) => {
    for (const size of [1, 2, 3, 7, 31]) {
      const byCursor = await walk(`page_size=${size}`)
      for (let n = 1; n <= byCursor.length; n++) {
        const p = await page(`page_size=${size}&page=${n}`)
        t.same(p.items.map((o) => o.event_id), byCursor[n - 1]!.items.map((o) => o.event_id), `size ${size}, page ${n}`)
        t.equal(p.next_cursor === null, n === byCursor.length, `size ${size}, page ${n}: next_cursor`)
      }
      t.same((await page(`page_size=${size}&page=${byCursor.length + 1}`)).items, [], `size ${size}: past the end`)
    }
  })

  await t.test('stable while new opportunities arrive (page numbers would repeat items)', async (t) => {
    const before = (await walk('page_size=4')).flatMap((p) => p.items.map((o) => o.event_id))
    let added = 0
    const seen: string[] = []
    await walk('page_size=4', async (p) => {
      seen.push(...p.items.map((o) => o.event_id))
      if (added < 3) {
        clock.set(`2026-11-20T12:00:0${added}Z`)
        await submit(100 + added++)
      }
    })
    t.same(seen, before, 'the walk that started goes on exactly as it would have')
    t.equal((await page('page_size=4')).total, before.length + 3, 'the new ones are there, at the top')
  })

  await t.test('a listed opportunity is byte for byte what submitting it again answers, microseconds and all', async (t) => {
    // The listing reads its times as PostgreSQL's text and cuts them to ISO; a repeated submission
    // (same external_id) answers the stored opportunity through a JavaScript Date: both keep the
    // milliseconds and drop the rest (.123999 is .123, not .124). PostgreSQL writes no trailing
    // zeros (".1", or no fraction at all), which the listing must put back.
    const shapes = [
      ['truncated', '2026-11-12T09:00:00.123999Z', '2026-11-12T09:30:00.000999Z', '2026-11-12T09:00:00.123Z', '2026-11-12T09:30:00.000Z'],
      ['whole', '2026-11-12T09:00:01Z', '2026-11-12T09:30:01.5Z', '2026-11-12T09:00:01.000Z', '2026-11-12T09:30:01.500Z'],
      ['tenth', '2026-11-12T09:00:02.1Z', null, '2026-11-12T09:00:02.100Z', null],
    ] as const
    for (const [name, receivedAt, reviewedAt, listedAt, listedReview] of shapes) {
      await app.db.execute(sql`
        insert into opportunities (id, project_id, contribution_type, key_information, reason, suggested_action, received_at, review_updated_at, source_url, external_id, review_note)
        values (${`opp_${name}`}, ${project}, 'content_idea', 'k', 'r', 'a', ${receivedAt}, ${reviewedAt}, 'https://example.com/x', ${`ext-${name}`}, 'seen')`)
      const listed = (await page('type=content_idea&page_size=100')).items.find((o) => o.event_id === `opp_${name}`)
      t.match(listed, { received_at: listedAt, review_updated_at: listedReview }, `${name}: the times to the millisecond`)
      const again = await app.inject({
        method: 'POST',
        url,
        headers: bearer(ws.keys.mcp),
        payload: { contribution_type: 'content_idea', key_information: 'k', reason: 'r', suggested_action: 'a', external_id: `ext-${name}` },
      })
      t.equal(again.statusCode, 200, `${name}: the existing opportunity`)
      t.equal(JSON.stringify({ ...listed, created: false, similar: JSON.parse(again.body).similar }), again.body, `${name}: the same fields, in the same order, with the same values`)
    }
    // A cursor made from each of them leads on to the next (a whole second is .000000, not absent).
    const pages = await walk('type=content_idea&page_size=1')
    const ids = pages.flatMap((p) => p.items.map((o) => o.event_id))
    t.ok(['opp_truncated', 'opp_whole', 'opp_tenth'].every((id) => ids.includes(id)), 'the walk passes through all three')
    t.equal(new Set(ids).size, ids.length, 'and repeats nothing')
    t.ok(pages.slice(0, -1).every((p) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z\|/.test(Buffer.from(p.next_cursor!, 'base64url').toString('utf8'))), 'every cursor holds the time to the microsecond')
  })

  await t.test('a bad cursor is a 400 invalid_arguments naming `after`', async (t) => {
    const good = (await page('page_size=2')).next_cursor!
    const decoded = Buffer.from(good, 'base64url').toString('utf8')
    const forge = (text: string) => Buffer.from(text).toString('base64url')
    const [at, id] = decoded.split('|')
    const bad = [
      'not-a-cursor',
      forge('hello'),
      forge(`${at}|${id}`),
      forge(`${at}|${id}|1`),
      forge(`${at}|${id}|two`),
      forge(`${at}|bogus|2`),
      forge(`2026-02-30T10:00:00.000000Z|${id}|2`),
      forge(`0000-01-01T00:00:00.000000Z|${id}|2`),
      forge(`2026-11-12T10:00:00Z|${id}|2`),
      forge(`${at}|${id}|${'9'.repeat(20)}`), // not a safe integer
    ]
    for (const cursor of bad) {
      const res = await get(`after=${encodeURIComponent(cursor)}`)
      t.equal(res.statusCode, 400, cursor)
      t.same(res.json(), {
        error: { code: 'invalid_arguments', message: 'The cursor `after` is not one this API returned.', details: [{ path: 'after', message: 'is not a valid cursor' }] },
      })
    }
    const empty = await get('after=')
    t.equal(empty.statusCode, 400, 'an empty cursor fails the schema')
    t.equal(empty.json().error.details[0].path, 'after')
    // The same over the tools REST API (and MCP: test/mcp/eras.test.ts compares the bytes).
    const tool = await app.inject({ method: 'POST', url: '/v1/tools/list_opportunities', headers: bearer(ws.keys.service), payload: { project, after: 'not-a-cursor' } })
    t.equal(tool.statusCode, 400)
    t.equal(tool.body, (await get('after=not-a-cursor')).body, 'the REST tool call gives the same error body')
  })
})
