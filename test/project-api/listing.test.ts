// GET /api/v1/mcp/projects/:project_id/opportunities: every filter, pagination, totals from
// the trigger-maintained counters, `date=today` in the project's time zone, and every bad value.
import t from 'tap'
import { eq } from '../../db/orm.ts'
import { bearer, buildTestApp, fixedClock, seedWorkspace, writeBehind } from '../helpers/app.ts'
import { projects } from '../../db/schema.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`

interface Item {
  event_id: string
  contribution_type: string
  received_at: string
  status: string
  evaluation: string
  key_information: string
}
interface Page {
  items: Item[]
  page: number
  page_size: number
  total: number
  total_pages: number
}

const TYPES = ['potential_user_opportunity', 'partnership', 'content_idea'] as const

t.test('opportunities listing', async (t) => {
  const clock = fixedClock('2026-11-18T08:00:00Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const key = ws.keys.mcp
  const project = ws.project.id

  const submit = async (body: Record<string, unknown>, k = key, p = project) => {
    const res = await app.inject({ method: 'POST', url: `${base(p)}/opportunities`, headers: bearer(k), payload: body })
    if (res.statusCode !== 201) throw new Error(`submit failed: ${res.statusCode} ${res.body}`)
    return res.json() as Item
  }
  const list = async (query: string, k = key, p = project) => {
    const res = await app.inject({ method: 'GET', url: `${base(p)}/opportunities${query ? `?${query}` : ''}`, headers: bearer(k) })
    return res
  }
  const page = async (query: string, k = key, p = project): Promise<Page> => {
    const res = await list(query, k, p)
    if (res.statusCode !== 200) throw new Error(`list ${query} failed: ${res.statusCode} ${res.body}`)
    return res.json() as Page
  }
  const review = async (id: string, body: Record<string, unknown>) => {
    const res = await app.inject({ method: 'PATCH', url: `${base(project)}/opportunities/${id}/review`, headers: bearer(key), payload: body })
    if (res.statusCode !== 200) throw new Error(`review failed: ${res.statusCode} ${res.body}`)
  }
  /** All items matching a query, walking every page. */
  const all = async (query: string): Promise<Item[]> => {
    const out: Item[] = []
    for (let p = 1; ; p++) {
      const pg = await page(`${query}&page=${p}&page_size=100`)
      out.push(...pg.items)
      if (p >= pg.total_pages) return out
    }
  }

  // 23 opportunities: #0–#9 on 2026-11-18/19 (UTC), #10–#22 "today" 2026-11-20 (UTC).
  const submitted: Item[] = []
  for (let i = 0; i < 23; i++) {
    const at = i < 5
      ? `2026-11-18T09:${String(i).padStart(2, '0')}:00Z`
      : i < 10
        ? `2026-11-19T23:5${i - 5}:00Z`
        : `2026-11-20T00:${String(i).padStart(2, '0')}:00Z`
    clock.set(at)
    submitted.push(await submit({
      contribution_type: TYPES[i % 3],
      key_information: `Opportunity #${i}`,
      reason: 'reason',
      suggested_action: 'action',
    }))
  }
  clock.set('2026-11-20T12:00:00Z')
  const newestFirst = [...submitted].reverse().map((o) => o.event_id)
  const byType = (type: string) => submitted.filter((o) => o.contribution_type === type).reverse().map((o) => o.event_id)
  const today = submitted.slice(10).reverse().map((o) => o.event_id)

  t.test('defaults: page 1 of 20, newest first, totals from all 23', async (t) => {
    const pg = await page('')
    t.equal(pg.page, 1)
    t.equal(pg.page_size, 20)
    t.equal(pg.total, 23)
    t.equal(pg.total_pages, 2)
    t.same(pg.items.map((o) => o.event_id), newestFirst.slice(0, 20))
    const second = await page('page=2')
    t.same(second.items.map((o) => o.event_id), newestFirst.slice(20))
    t.equal(second.total, 23)
    t.equal(second.total_pages, 2)
    // `all` everywhere is the same as no filter.
    const explicit = await page('type=all&date=all&evaluation=all&status=all&page=1&page_size=20')
    t.same(explicit, pg)
  })

  t.test('pagination covers every item exactly once', async (t) => {
    const seen: string[] = []
    const sizes: number[] = []
    for (let p = 1; p <= 5; p++) {
      const pg = await page(`page=${p}&page_size=5`)
      t.equal(pg.page, p)
      t.equal(pg.page_size, 5)
      t.equal(pg.total, 23)
      t.equal(pg.total_pages, 5)
      sizes.push(pg.items.length)
      seen.push(...pg.items.map((o) => o.event_id))
    }
    t.same(sizes, [5, 5, 5, 5, 3])
    t.equal(new Set(seen).size, 23, 'no repeats')
    t.same(seen, newestFirst, 'the pages, joined, are the whole list in order')
    const beyond = await page('page=6&page_size=5')
    t.same(beyond.items, [])
    t.equal(beyond.total, 23)
    t.equal(beyond.total_pages, 5)
    const one = await page('page_size=1&page=23')
    t.same(one.items.map((o) => o.event_id), [newestFirst[22]])
    t.equal(one.total_pages, 23)
    const max = await page('page_size=100')
    t.equal(max.items.length, 23)
    t.equal(max.total_pages, 1)
  })

  t.test('ties on received_at are broken by event_id, stably across pages', async (t) => {
    clock.set('2026-11-17T00:00:00Z')
    const same: Item[] = []
    for (let i = 0; i < 4; i++) {
      same.push(await submit({ contribution_type: 'tie_break', key_information: `Tie ${i}`, reason: 'r', suggested_action: 'a' }))
    }
    clock.set('2026-11-20T12:00:00Z')
    const expected = same.map((o) => o.event_id).sort()
    const seen: string[] = []
    for (let p = 1; p <= 4; p++) seen.push(...(await page(`type=tie_break&page=${p}&page_size=1`)).items.map((o) => o.event_id))
    t.same(seen, expected)
    // Remove them again from every later expectation: they are older than everything else.
    const pg = await page('type=tie_break')
    t.equal(pg.total, 4)
  })

  t.test('type filter', async (t) => {
    for (const type of TYPES) {
      const pg = await page(`type=${type}&page_size=100`)
      t.same(pg.items.map((o) => o.event_id), byType(type), type)
      t.equal(pg.total, byType(type).length)
      t.ok(pg.items.every((o) => o.contribution_type === type))
    }
    t.same(byType('potential_user_opportunity').length, 8)
    t.same(byType('partnership').length, 8)
    t.same(byType('content_idea').length, 7)
    const pg = await page('type=partnership&page=2&page_size=3')
    t.same(pg.items.map((o) => o.event_id), byType('partnership').slice(3, 6))
    t.equal(pg.total_pages, 3)
    const none = await page('type=never_submitted')
    t.same(none, { items: [], page: 1, page_size: 20, total: 0, total_pages: 0, next_cursor: null })
  })

  t.test('date=today is the current UTC day for a UTC project', async (t) => {
    const pg = await page('date=today&page_size=100')
    t.same(pg.items.map((o) => o.event_id), today)
    t.equal(pg.total, 13)
    t.equal(pg.total_pages, 1)
    const paged = await page('date=today&page_size=5&page=3')
    t.same(paged.items.map((o) => o.event_id), today.slice(10))
    t.equal(paged.total, 13)
    t.equal(paged.total_pages, 3)
    const typed = await page('date=today&type=content_idea')
    t.same(typed.items.map((o) => o.event_id), submitted.slice(10).filter((o) => o.contribution_type === 'content_idea').reverse().map((o) => o.event_id))
    t.equal(typed.total, 4) // #11, #14, #17, #20
    clock.set('2026-11-19T23:59:59.999Z')
    const yesterday = await page('date=today')
    t.same(yesterday.items.map((o) => o.event_id), submitted.slice(5, 10).reverse().map((o) => o.event_id))
    clock.set('2026-11-21T00:00:00Z')
    t.same((await page('date=today')).total, 0)
    clock.set('2026-11-20T12:00:00Z')
  })

  t.test('reviews move items between statuses and evaluations; totals follow', async (t) => {
    const ids = submitted.map((o) => o.event_id)
    // #0–#3 contacted, #4 done, #5–#9 useful, #10–#11 not_useful, #12 useful + adopted.
    for (const i of [0, 1, 2, 3]) await review(ids[i]!, { status: 'contacted' })
    await review(ids[4]!, { status: 'done' })
    for (const i of [5, 6, 7, 8, 9]) await review(ids[i]!, { evaluation: 'useful' })
    for (const i of [10, 11]) await review(ids[i]!, { evaluation: 'not_useful' })
    await review(ids[12]!, { evaluation: 'useful', status: 'adopted' })
    // #3 moves on, #9 is un-evaluated again: the counters must move back too.
    await review(ids[3]!, { status: 'ignored' })
    await review(ids[9]!, { evaluation: '' })

    const expectIds = async (query: string, indexes: number[]) => {
      const pg = await page(`${query}&page_size=100`)
      const expected = indexes.map((i) => ids[i]!).reverse()
      t.same(pg.items.map((o) => o.event_id), expected, query)
      t.equal(pg.total, expected.length, `${query}: total`)
      t.equal(pg.total_pages, expected.length ? 1 : 0, `${query}: total_pages`)
    }
    const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, k) => a + k)
    const pendingAll = [...range(5, 11), ...range(13, 22)]
    await expectIds('status=contacted', [0, 1, 2])
    await expectIds('status=ignored', [3])
    await expectIds('status=done', [4])
    await expectIds('status=adopted', [12])
    await expectIds('status=reviewing', [])
    await expectIds('type=tie_break&status=done', []) // the tie-break ones are all pending
    await expectIds('evaluation=useful', [5, 6, 7, 8, 12])
    await expectIds('evaluation=not_useful', [10, 11])
    await expectIds('evaluation=useful&status=pending', [5, 6, 7, 8])
    await expectIds('evaluation=useful&status=adopted', [12])
    await expectIds('evaluation=not_useful&status=contacted', [])
    await expectIds('type=potential_user_opportunity&status=contacted', [0]) // #0 (0%3=0), #3 is ignored now
    await expectIds('type=partnership&evaluation=useful', [7]) // #7 (7%3=1)
    await expectIds('type=content_idea&evaluation=useful', [5, 8]) // #5, #8 (…%3=2)
    await expectIds('date=today&evaluation=not_useful', [10, 11])
    await expectIds('date=today&status=adopted', [12])
    await expectIds('date=today&evaluation=useful&status=pending', [])

    const pending = await page('status=pending&page_size=4')
    t.equal(pending.total, pendingAll.length + 4) // + the 4 tie-break opportunities
    t.equal(pending.total_pages, Math.ceil((pendingAll.length + 4) / 4))
    const walked = await all('status=pending')
    t.same(walked.map((o) => o.event_id), [...pendingAll.map((i) => ids[i]!).reverse(), ...(await page('type=tie_break')).items.map((o) => o.event_id)])
    t.ok(walked.every((o) => o.status === 'pending'))
    // The unfiltered total never changes with reviews.
    t.equal((await page('')).total, 27)
  })

  t.test('every bad value is a 400 naming the field', async (t) => {
    const cases: [string, string][] = [
      ['status=bogus', 'status'],
      ['status=PENDING', 'status'],
      ['status=', 'status'],
      ['status=pending&status=done', 'status'],
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=1.5', 'page'],
      ['page=abc', 'page'],
      ['page_size=0', 'page_size'],
      ['page_size=101', 'page_size'],
      ['page_size=abc', 'page_size'],
      ['page_size=2.5', 'page_size'],
      ['date=yesterday', 'date'],
      ['date=TODAY', 'date'],
      ['date=2026-11-20', 'date'],
      ['evaluation=maybe', 'evaluation'],
      ['evaluation=', 'evaluation'],
      ['type=Not-Snake', 'type'],
      ['type=', 'type'],
      [`type=${'a'.repeat(65)}`, 'type'],
      ['unknown=1', 'unknown'],
      ['pagesize=10', 'pagesize'],
    ]
    for (const [query, path] of cases) {
      const res = await list(query)
      t.equal(res.statusCode, 400, query)
      const err = res.json().error
      t.equal(err.code, 'invalid_arguments', query)
      t.same([...new Set(err.details.map((d: { path: string }) => d.path))], [path], `${query} names ${path} (only)`)
      t.type(err.details[0].message, 'string')
      t.not(err.details[0].message, '')
    }
    const several = await list('status=bogus&page=0&date=yesterday')
    t.same([...new Set(several.json().error.details.map((d: { path: string }) => d.path))].sort(), ['date', 'page', 'status'])
  })

  t.test('date=today in a non-UTC project time zone', async (t) => {
    const other = await seedWorkspace(app)
    const setZone = (tz: string) => writeBehind(app, app.db.update(projects).set({ timezone: tz }).where(eq(projects.id, other.project.id)))
    await setZone('Asia/Tokyo') // UTC+9, no DST: local midnight is 15:00Z
    const at = [
      '2026-11-20T14:59:59.000Z', // Tokyo 2026-11-20 23:59:59
      '2026-11-20T15:00:00.000Z', // Tokyo 2026-11-21 00:00:00
      '2026-11-21T14:59:59.999Z', // Tokyo 2026-11-21 23:59:59.999
      '2026-11-21T15:00:00.000Z', // Tokyo 2026-11-22 00:00:00
    ]
    const ids: string[] = []
    for (const [i, iso] of at.entries()) {
      clock.set(iso)
      const o = await submit({ contribution_type: 'tz_check', key_information: `tz ${i}`, reason: 'r', suggested_action: 'a' }, other.keys.mcp, other.project.id)
      t.equal(o.received_at, iso)
      ids.push(o.event_id)
    }
    const todayIds = async () => (await page('date=today', other.keys.mcp, other.project.id)).items.map((o) => o.event_id)
    const todayTotal = async () => (await page('date=today', other.keys.mcp, other.project.id)).total

    clock.set('2026-11-20T14:59:59.999Z') // Tokyo 11-20 23:59:59.999
    t.same(await todayIds(), [ids[0]])
    clock.set('2026-11-20T15:00:00.000Z') // Tokyo 11-21 00:00
    t.same(await todayIds(), [ids[2], ids[1]])
    t.equal(await todayTotal(), 2)
    clock.set('2026-11-21T03:00:00Z') // Tokyo 11-21 12:00, but UTC 11-21 too
    t.same(await todayIds(), [ids[2], ids[1]])
    clock.set('2026-11-21T15:00:00Z') // Tokyo 11-22
    t.same(await todayIds(), [ids[3]])

    await setZone('America/Los_Angeles') // PST, UTC-8: local midnight is 08:00Z
    clock.set('2026-11-21T07:59:59Z') // LA 11-20 23:59:59: #0, #1 (LA 11-20 06:59, 07:00)
    t.same(await todayIds(), [ids[1], ids[0]])
    clock.set('2026-11-21T08:00:00Z') // LA 11-21 00:00: #2, #3 (LA 11-21 06:59, 07:00)
    t.same(await todayIds(), [ids[3], ids[2]])
    t.equal(await todayTotal(), 2)

    // A 25-hour local day: Berlin on 2026-10-25 runs from 10-24T22:00Z to 10-25T23:00Z.
    await setZone('Europe/Berlin')
    const dst = ['2026-10-24T21:59:59Z', '2026-10-24T22:00:00Z', '2026-10-25T22:59:59Z', '2026-10-25T23:00:00Z']
    const dstIds: string[] = []
    for (const [i, iso] of dst.entries()) {
      clock.set(iso)
      dstIds.push((await submit({ contribution_type: 'dst_check', key_information: `dst ${i}`, reason: 'r', suggested_action: 'a' }, other.keys.mcp, other.project.id)).event_id)
    }
    clock.set('2026-10-25T12:00:00Z')
    const pg = await page('date=today&type=dst_check', other.keys.mcp, other.project.id)
    t.same(pg.items.map((o) => o.event_id), [dstIds[2], dstIds[1]])
    t.equal(pg.total, 2)
    clock.set('2026-10-24T21:59:59Z')
    t.same((await page('date=today', other.keys.mcp, other.project.id)).items.map((o) => o.event_id), [dstIds[0]])
    clock.set('2026-10-25T23:00:00Z')
    t.same((await page('date=today', other.keys.mcp, other.project.id)).items.map((o) => o.event_id), [dstIds[3]])

    // The first workspace is untouched by all this.
    clock.set('2026-11-20T12:00:00Z')
    t.equal((await page('date=today')).total, 13)
  })
  t.end()
})
