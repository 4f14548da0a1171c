// CSV exports on the project-side API: the opportunity listing and the daily metrics answer in
// RFC 4180 CSV for `Accept: text/csv` or `?format=csv`, with the same rows as the JSON listing
// for the same filters, the same access checks, and JSON errors; JSON stays the default.
import t from 'tap'
import { addMember, bearer, buildTestApp, fixedClock, ingestEvents, seedWorkspace } from '../helpers/app.ts'
import { csvField, csvRow, wantsCsv } from '../../core/csv.ts'
import { csvObjects, parseCsv } from './csv.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`
const HEADER = 'event_id,received_at,contribution_type,status,evaluation,key_information,reason,suggested_action,source_url,external_id,review_note,review_updated_at'

t.test('the CSV writer', async (t) => {
  t.equal(csvField('plain'), 'plain')
  t.equal(csvField('a,b'), '"a,b"')
  t.equal(csvField('say "hi"'), '"say ""hi"""')
  t.equal(csvField('one\ntwo'), '"one\ntwo"')
  t.equal(csvField('one\r\ntwo'), '"one\r\ntwo"')
  t.equal(csvField(''), '')
  t.equal(csvField(null), '')
  t.equal(csvField(42), '42')
  // Formula injection: a leading apostrophe, then the usual quoting.
  t.equal(csvField('=1+2'), "'=1+2")
  t.equal(csvField('+1'), "'+1")
  t.equal(csvField('-1'), "'-1")
  t.equal(csvField('@SUM(A1)'), "'@SUM(A1)")
  t.equal(csvField('\tx'), "'\tx")
  t.equal(csvField('\rx'), '"\'\rx"')
  t.equal(csvField('\0=cmd'), "'\0=cmd", 'a leading NUL (ASVS 5.0 §1.2.10)')
  t.equal(csvField('=HYPERLINK("http://x","y")'), '"\'=HYPERLINK(""http://x"",""y"")"')
  t.equal(csvField('a=b'), 'a=b', 'only a leading formula character counts')
  t.equal(csvRow(['a', 'b,c', null]), 'a,"b,c",\r\n')
  t.ok(wantsCsv(undefined, 'text/csv'))
  t.ok(wantsCsv(undefined, 'text/csv;q=0.9, */*;q=0.1'))
  t.notOk(wantsCsv(undefined, 'application/json, text/csv'), 'JSON first when both are as good')
  t.notOk(wantsCsv(undefined, 'application/json;q=1, text/csv;q=0.5'))
  t.notOk(wantsCsv(undefined, '*/*'))
  t.notOk(wantsCsv(undefined, undefined))
  t.notOk(wantsCsv('json', 'text/csv'), 'format=json wins over Accept')
  t.ok(wantsCsv('csv', 'application/json'), 'format=csv wins over Accept')
})

t.test('opportunity and metrics exports', async (t) => {
  const clock = fixedClock('2026-11-18T08:00:00Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const key = ws.keys.mcp
  const project = ws.project.id
  const slug = ws.project.slug

  const submit = async (body: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: `${base(project)}/opportunities`, headers: bearer(key), payload: body })
    if (res.statusCode !== 201) throw new Error(`submit failed: ${res.statusCode} ${res.body}`)
    return res.json() as { event_id: string }
  }
  const get = (url: string, headers: Record<string, string> = {}, k: string | null = key) =>
    app.inject({ method: 'GET', url, headers: { ...(k ? bearer(k) : {}), ...headers } })

  // Texts that need quoting, escaping and neutralising.
  const tricky = [
    '=HYPERLINK("http://evil.test","click")',
    '+1 555 0100',
    '-2+3',
    '@SUM(A1:A9)',
    '\tindented',
    'comma, inside',
    'a "quoted" word',
    'two\nlines',
    'crlf\r\ninside',
    'plain text ünïcødé ✓',
  ]
  const types = ['potential_user_opportunity', 'partnership', 'content_idea']
  const ids: string[] = []
  for (let i = 0; i < 30; i++) {
    // Three received times, ten each: ties in received_at are ordered by id.
    clock.set(`2026-11-${16 + (i % 3)}T0${i % 3}:00:00Z`)
    const text = tricky[i % tricky.length]!
    ids.push((await submit({
      contribution_type: types[i % 3],
      key_information: text,
      reason: i % 2 === 0 ? `reason ${i}` : `=cmd|' /C calc'!A0 ${i}`,
      suggested_action: `act ${i}`,
      ...(i % 4 === 0 ? { source_url: `https://example.test/${i}?a=1,b=2`, external_id: `ext-${i}` } : {}),
    })).event_id)
  }
  clock.set('2026-11-18T08:00:00Z')
  for (const [i, id] of ids.entries()) {
    if (i % 5 !== 0) continue
    const res = await app.inject({
      method: 'PATCH',
      url: `${base(project)}/opportunities/${id}/review`,
      headers: bearer(key),
      payload: { status: i % 10 === 0 ? 'contacted' : 'done', evaluation: 'useful', note: i === 0 ? '-note, "quoted"' : 'ok' },
    })
    if (res.statusCode !== 200) throw new Error(res.body)
  }

  /** Every item of the JSON listing for a query, walking its cursor. */
  const jsonAll = async (query: string) => {
    const out: Record<string, unknown>[] = []
    let after: string | null = null
    do {
      const res = await get(`${base(project)}/opportunities?${query}&page_size=7${after ? `&after=${after}` : ''}`)
      if (res.statusCode !== 200) throw new Error(res.body)
      const page = res.json() as { items: Record<string, unknown>[]; next_cursor: string | null }
      out.push(...page.items)
      after = page.next_cursor
    } while (after)
    return out
  }

  t.test('the listing as CSV: headers, shape, every value as the JSON listing has it', async (t) => {
    const res = await get(`${base(project)}/opportunities`, { accept: 'text/csv' })
    t.equal(res.statusCode, 200, res.body.slice(0, 300))
    t.equal(res.headers['content-type'], 'text/csv; charset=utf-8')
    t.equal(res.headers['content-disposition'], `attachment; filename="${slug}-opportunities-2026-11-18.csv"`)
    t.match(res.headers.vary, /Accept/)
    t.ok(res.body.startsWith(`${HEADER}\r\n`), 'header row first, CRLF')
    t.ok(res.body.endsWith('\r\n'), 'every record ends in CRLF')
    const rows = csvObjects(res.body)
    const json = await jsonAll('')
    t.equal(rows.length, 30)
    t.same(rows.map((r) => r.event_id), json.map((o) => o.event_id), 'the same rows in the same order (newest first) as the JSON listing')
    const unformula = (v: unknown) => (v === null ? '' : /^[=+\-@\t\r\0]/.test(String(v)) ? `'${v}` : String(v))
    for (const [i, row] of rows.entries()) {
      const o = json[i]!
      for (const column of HEADER.split(',')) t.equal(row[column], unformula(o[column]), `${o.event_id} ${column}`)
    }
    // Spot checks on the raw text: quoting, doubled quotes, neutralised formulas.
    t.match(res.body, '"\'=HYPERLINK(""http://evil.test"",""click"")"')
    t.match(res.body, ",'+1 555 0100,")
    t.match(res.body, ",'@SUM(A1:A9),")
    t.match(res.body, ',"two\nlines",')
    t.match(res.body, ',"a ""quoted"" word",')
    t.match(res.body, '"\'-note, ""quoted"""')
    t.notMatch(res.body, /,=/, 'no cell starts with =')
  })

  t.test('?format=csv, Accept, and JSON by default (byte-identical)', async (t) => {
    const viaFormat = await get(`${base(project)}/opportunities?format=csv`)
    const viaAccept = await get(`${base(project)}/opportunities`, { accept: 'text/csv' })
    t.equal(viaFormat.statusCode, 200)
    t.equal(viaFormat.body, viaAccept.body)
    t.equal(viaFormat.headers['content-type'], 'text/csv; charset=utf-8')
    const plain = await get(`${base(project)}/opportunities?status=done`)
    const asJson = await get(`${base(project)}/opportunities?status=done&format=json`, { accept: 'text/csv' })
    const acceptJson = await get(`${base(project)}/opportunities?status=done`, { accept: 'application/json' })
    t.match(plain.headers['content-type'], /^application\/json/)
    t.equal(asJson.body, plain.body, 'format=json answers JSON even with Accept: text/csv')
    t.equal(acceptJson.body, plain.body)
    t.equal(plain.json().total, 3)
    const head = await app.inject({ method: 'HEAD', url: `${base(project)}/opportunities?format=csv`, headers: bearer(key) })
    t.equal(head.statusCode, 200, 'HEAD: the headers of the CSV answer')
    t.equal(head.headers['content-type'], 'text/csv; charset=utf-8')
    t.equal(head.body, '')
  })

  t.test('filters: the same rows as the JSON listing', async (t) => {
    const queries = [
      'type=partnership', 'status=done', 'status=contacted', 'evaluation=useful', 'evaluation=not_useful',
      'date=today', 'q=quoted', 'q=%25', 'q=CALC', 'type=content_idea&status=pending&q=act', 'status=all&evaluation=all&type=all&date=all',
    ]
    for (const query of queries) {
      const res = await get(`${base(project)}/opportunities?${query}&format=csv`)
      t.equal(res.statusCode, 200, `${query}: ${res.body.slice(0, 200)}`)
      t.same(csvObjects(res.body).map((r) => r.event_id), (await jsonAll(query)).map((o) => o.event_id), query)
    }
    clock.set('2026-11-17T12:00:00Z')
    const today = csvObjects((await get(`${base(project)}/opportunities?date=today&format=csv`)).body)
    t.equal(today.length, 10, 'date=today in the project time zone')
    clock.set('2026-11-18T08:00:00Z')
    const none = await get(`${base(project)}/opportunities?q=nothing-matches&format=csv`)
    t.equal(none.body, `${HEADER}\r\n`, 'no match: the header row alone')
  })

  t.test('the walk reads in batches by key: small batches give the same rows, ties included', async (t) => {
    const filters = { type: 'all', status: 'all' as const, evaluation: 'all' as const }
    const read = async (batch: number) => {
      const out: string[] = []
      let batches = 0
      for await (const items of app.repos.opportunities.walk(project, filters, batch)) {
        batches++
        t.ok(items.length <= batch)
        out.push(...items.map((o) => o.event_id))
      }
      return { out, batches }
    }
    const whole = await read(1000)
    t.equal(whole.batches, 1)
    for (const batch of [1, 3, 7, 10, 29, 30]) {
      const { out, batches } = await read(batch)
      t.same(out, whole.out, `batches of ${batch}`)
      t.equal(batches, Math.ceil(30 / batch))
    }
    t.equal(new Set(whole.out).size, 30)
  })

  t.test('errors stay JSON 4xx, even when CSV was asked for', async (t) => {
    const cases: [string, Record<string, string>, number, string, string?][] = [
      [`${base(project)}/opportunities?status=nope`, { accept: 'text/csv' }, 400, 'invalid_arguments', 'status'],
      [`${base(project)}/opportunities?format=xml`, {}, 400, 'invalid_arguments', 'format'],
      [`${base(project)}/opportunities?format=csv&page=0`, {}, 400, 'invalid_arguments', 'page'],
      [`${base(project)}/opportunities?page_size=101`, { accept: 'text/csv' }, 400, 'invalid_arguments', 'page_size'],
      [`${base(project)}/opportunities?after=abc&format=csv`, {}, 400, 'invalid_arguments', 'after'],
      [`${base(project)}/opportunities?bogus=1&format=csv`, {}, 400, 'invalid_arguments', 'bogus'],
      [`${base('no-such-project')}/opportunities?format=csv`, {}, 404, 'not_found'],
      [`${base(project)}/daily-ops?window=1y&format=csv`, {}, 400, 'invalid_arguments', 'window'],
      [`${base(project)}/daily-event-summary?event=&format=csv`, {}, 400, 'invalid_arguments', 'event'],
    ]
    for (const [url, headers, status, code, path] of cases) {
      const res = await get(url, headers)
      t.equal(res.statusCode, status, `${url}: ${res.body.slice(0, 200)}`)
      t.match(res.headers['content-type'], /^application\/json/, url)
      t.notOk(res.headers['content-disposition'], `${url}: no attachment`)
      const body = res.json() as { error: { code: string; details?: { path: string }[] } }
      t.equal(body.error.code, code, url)
      if (path) t.ok(body.error.details?.some((d) => d.path.includes(path)), `${url}: details name ${path}: ${JSON.stringify(body.error.details)}`)
    }
  })

  t.test('paging arguments with CSV: that page of the listing, as CSV', async (t) => {
    // The event_id of each record: the first field of a line (no text here starts a line with an id).
    const csvOf = (body: string) => body.match(/^opp_[0-9A-Za-z]+(?=,)/gm) ?? []
    for (const query of ['page=2&page_size=5', 'page_size=100', 'status=pending&page_size=3']) {
      const json = await get(`${base(project)}/opportunities?${query}`, {})
      t.equal(json.statusCode, 200)
      const page = json.json() as { items: { event_id: string }[]; page: number; next_cursor: string | null }
      for (const [how, url, headers] of [
        ['?format=csv', `${base(project)}/opportunities?format=csv&${query}`, {}],
        ['Accept: text/csv', `${base(project)}/opportunities?${query}`, { accept: 'text/csv' }],
      ] as const) {
        const res = await get(url, headers)
        t.equal(res.statusCode, 200, `${query} ${how}`)
        t.equal(res.headers['content-type'], 'text/csv; charset=utf-8')
        t.match(res.headers['content-disposition'], new RegExp(`^attachment; filename="${project}-opportunities-page-${page.page}\\.csv"$`))
        t.ok(res.body.startsWith('event_id,received_at,'), 'the export\'s header')
        t.same(csvOf(res.body), page.items.map((o) => o.event_id), `${query} ${how}: the JSON page's rows, in its order`)
      }
      // The cursor leads on as CSV too.
      if (page.next_cursor) {
        const next = await get(`${base(project)}/opportunities?${query}&after=${encodeURIComponent(page.next_cursor)}`, {})
        const nextCsv = await get(`${base(project)}/opportunities?${query}&after=${encodeURIComponent(page.next_cursor)}&format=csv`, {})
        t.same(csvOf(nextCsv.body), next.json().items.map((o: { event_id: string }) => o.event_id), `${query}: the page after the cursor`)
      }
    }
    // Without paging arguments, every matching row (the export).
    const all = await get(`${base(project)}/opportunities?format=csv`, {})
    const total = (await get(`${base(project)}/opportunities`, {})).json().total
    t.equal(csvOf(all.body).length, total, 'no paging argument: every row')
    // A bad page is the listing's own 400, in JSON.
    const bad = await get(`${base(project)}/opportunities?format=csv&page_size=0`, {})
    t.equal(bad.statusCode, 400)
    t.equal(bad.json().error.details[0].path, 'page_size')
    t.notOk(bad.headers['content-disposition'])
  })

  t.test('access: the same checks as the JSON route', async (t) => {
    const viewer = await addMember(app, project, 'viewer')
    const other = await seedWorkspace(app)
    const anon = await get(`${base(project)}/opportunities?format=csv`, {}, null)
    t.equal(anon.statusCode, 401)
    t.match(anon.headers['content-type'], /^application\/json/)
    const bad = await get(`${base(project)}/opportunities?format=csv`, {}, 'gdm_notakey')
    t.equal(bad.statusCode, 401)
    const asViewer = await get(`${base(project)}/opportunities?format=csv`, {}, viewer.keys.mcp)
    t.equal(asViewer.statusCode, 403)
    t.equal(asViewer.json().error.code, 'review_access_required')
    t.notOk(asViewer.headers['content-disposition'])
    const elsewhere = await get(`${base(project)}/opportunities?format=csv`, { accept: 'text/csv' }, other.keys.mcp)
    t.equal(elsewhere.statusCode, 404)
    t.equal(elsewhere.json().error.code, 'not_found')
    // Metrics need only the viewer role, as in JSON.
    const metrics = await get(`${base(project)}/daily-ops?format=csv`, {}, viewer.keys.mcp)
    t.equal(metrics.statusCode, 200)
    const service = await get(`${base(project)}/opportunities?format=csv`, {}, ws.keys.service)
    const serviceJson = await get(`${base(project)}/opportunities`, {}, ws.keys.service)
    t.equal(service.statusCode, serviceJson.statusCode, 'a service key: the same answer as for JSON')
  })

  t.test('daily metrics as CSV', async (t) => {
    await ingestEvents(app, ws.keys.ingest, [
      ['signup', 'u1', '2026-11-17T09:00:00Z'],
      ['signup', 'u2', '2026-11-17T10:00:00Z'],
      ['daily_use', 'u1', '2026-11-18T07:00:00Z'],
      ['daily_use', 'u1', '2026-11-18T07:30:00Z'],
      ['clicked, "buy"', 'u3', '2026-11-16T07:00:00Z'],
      ['=evil', 'u3', '2026-11-16T07:00:00Z'],
    ])
    const ops = await get(`${base(project)}/daily-ops?window=7d`, { accept: 'text/csv' })
    t.equal(ops.statusCode, 200, ops.body)
    t.equal(ops.headers['content-type'], 'text/csv; charset=utf-8')
    t.equal(ops.headers['content-disposition'], `attachment; filename="${project}-daily-ops-2026-11-18.csv"`)
    const json = (await get(`${base(project)}/daily-ops?window=7d`)).json() as { days: Record<string, number | string>[] }
    const rows = csvObjects(ops.body)
    t.equal(rows.length, 7, 'one row per day, zeros included')
    t.same(rows, json.days.map((d) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, String(v)]))), 'the JSON days, column for column')
    t.same(rows.find((r) => r.date === '2026-11-17'), { date: '2026-11-17', registered_users: '2', daily_use_users: '0', active_users: '0', signup_events: '2', daily_use_events: '0' })
    t.equal(parseCsv(ops.body)[0]!.join(','), 'date,registered_users,daily_use_users,active_users,signup_events,daily_use_events')
    const month = csvObjects((await get(`${base(project)}/daily-ops?window=30d&format=csv`)).body)
    t.equal(month.length, 30)

    const summary = await get(`${base(project)}/daily-event-summary?format=csv`)
    t.equal(summary.statusCode, 200, summary.body)
    t.equal(summary.headers['content-disposition'], `attachment; filename="${project}-daily-event-summary-2026-11-18.csv"`)
    t.same(csvObjects(summary.body), [
      { date: '2026-11-16', event: "'=evil", count: '1', unique_users: '1' },
      { date: '2026-11-16', event: 'clicked, "buy"', count: '1', unique_users: '1' },
      { date: '2026-11-17', event: 'signup', count: '2', unique_users: '2' },
      { date: '2026-11-18', event: 'daily_use', count: '2', unique_users: '1' },
    ])
    t.match(summary.body, '"clicked, ""buy"""')
    const one = csvObjects((await get(`${base(project)}/daily-event-summary?event=signup&format=csv`)).body)
    t.same(one.map((r) => r.event), ['signup'])
    const jsonSummary = await get(`${base(project)}/daily-event-summary`)
    t.match(jsonSummary.headers['content-type'], /^application\/json/)
  })
})
