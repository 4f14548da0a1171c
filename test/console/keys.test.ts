// The console's key pages over HTTP: a new key by Post/Redirect/Get (shown once, a reload
// creates nothing), revoking only through the confirming POST, key ids in the tables, and the
// console's own 404, 405 and 500 pages beside the API's JSON errors.
import t from 'tap'
import { bearer, buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { Agent, csrfOf } from './helpers.ts'
import { rowsOf } from '../../db/client.ts'
import { sql } from '../../db/orm.ts'

const newKeyOf = (html: string) => /id="new-key">([^<]+)</.exec(html)?.[1]

t.test('console keys', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const count = async (kind: 'mcp' | 'service' | 'ingest') => (await app.repos.apiKeys.listForUser(ws.user.id, [kind])).length
  const owner = new Agent(app, '10.0.9.1')
  await owner.signIn(ws.user.email, ws.user.password)

  for (const [label, list, shown, form, kind, prefix] of [
    ['MCP Access', '/console/profile/mcp-access', '/console/profile/mcp-access/new', { name: 'laptop' }, 'mcp', 'gdm_'],
    ['Keys (service)', '/console/keys', '/console/keys/new', { kind: 'service', name: 'nightly' }, 'service', 'gds_'],
    ['Keys (ingest)', '/console/keys', '/console/keys/new', { kind: 'ingest', name: 'web', project: ws.project.id }, 'ingest', 'gdi_'],
  ] as const) {
    t.test(`${label}: POST → 303 → the key shown once; a reload shows "already shown" and creates nothing`, async (t) => {
      const before = await count(kind)
      const post = await owner.submit(list, list, form)
      t.equal(post.statusCode, 303, 'the create answers 303 See Other')
      t.equal(post.headers.location, shown, 'to the page that shows the key')
      t.notMatch(post.body, new RegExp(prefix), 'the redirect itself carries no key')
      t.equal(await count(kind), before + 1, 'one key created')

      const first = await owner.get(shown)
      t.equal(first.statusCode, 200)
      t.match(first.headers['cache-control'], /no-store/, 'not cached')
      const key = newKeyOf(first.body)
      t.match(key, new RegExp(`^${prefix}[0-9A-Za-z]{38}$`), 'the full key is shown')
      t.match(first.body, /shown only this once/)
      t.match(first.body, `${prefix}…${key!.slice(-4)}`, 'with the form it is listed as')
      const works = kind === 'mcp'
        ? await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/daily-ops`, headers: bearer(key!) })
        : kind === 'service'
          ? await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(key!) })
          : await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key!), payload: { events: [{ event: 'signup', distinct_id: 'u1' }] } })
      t.equal(works.statusCode, 200, 'and it works')

      const again = await owner.get(shown)
      t.equal(again.statusCode, 200)
      t.match(again.body, /This key was already shown/)
      t.notOk(again.body.includes(key!), 'the key is gone')
      t.notOk(again.body.includes(key!.slice(4, -4)), 'nor its secret part')
      t.equal(await count(kind), before + 1, 'the reload created no key')
      const sessions = rowsOf<{ data: unknown }>(await app.db.execute(sql`select data from sessions`))
      t.notOk(sessions.some((r) => JSON.stringify(r.data).includes(key!.slice(4, -4))), 'nor is it left in any stored session')
    })
  }

  t.test('a key waits only for its own page and only for its own session', async (t) => {
    const post = await owner.submit('/console/profile/mcp-access', '/console/profile/mcp-access', { name: 'x' })
    t.equal(post.statusCode, 303)
    const other = new Agent(app, '10.0.9.2')
    await other.signIn(ws.user.email, ws.user.password)
    t.match((await other.get('/console/profile/mcp-access/new')).body, /already shown/, 'another session of the same user does not see it')
    t.match((await owner.get('/console/keys/new')).body, /already shown/, 'the Keys page does not show an MCP key')
    t.match(newKeyOf((await owner.get('/console/profile/mcp-access/new')).body), /^gdm_/, 'its own page still does')
  })

  t.test('scope fields: project, read-only and expiry reach the key; bad input is a flash and creates nothing', async (t) => {
    const day = 86_400_000
    const cases = [
      { list: '/console/profile/mcp-access', kind: 'mcp', form: { name: 'narrow', project: ws.project.slug, read_only: 'on', expires: '30' } },
      { list: '/console/keys', kind: 'service', form: { kind: 'service', name: 'narrow', project: ws.project.id, read_only: 'on', expires_on: '2999-01-31' } },
      { list: '/console/keys', kind: 'ingest', form: { kind: 'ingest', name: 'narrow', project: ws.project.id, expires: '7' } },
    ] as const
    for (const c of cases) {
      const post = await owner.submit(c.list, c.list, c.form)
      t.equal(post.statusCode, 303, `${c.kind}: created`)
      const row = (await app.repos.apiKeys.listForUser(ws.user.id, [c.kind]))[0]!
      t.equal(row.projectId, ws.project.id, `${c.kind}: narrowed to the project`)
      t.equal(row.readOnly, c.kind !== 'ingest', `${c.kind}: read-only as asked`)
      if ('expires_on' in c.form) t.equal(row.expiresAt?.toISOString(), '2999-01-31T23:59:59.999Z', 'a date: until the end of that day')
      else t.ok(Math.abs(row.expiresAt!.getTime() - (app.now().getTime() + Number(c.form.expires) * day)) < 60_000, `${c.kind}: expires in ${c.form.expires} days`)
      await owner.get(c.list.endsWith('keys') ? '/console/keys/new' : '/console/profile/mcp-access/new')
      const page = await owner.get(c.list)
      const html = page.body.slice(page.body.indexOf(`data-key-id="${row.id}"`))
      const cells = html.slice(0, html.indexOf('</tr>'))
      t.match(cells, ws.project.slug, 'the table names the project')
      t.match(cells, `project ${ws.project.slug}`, 'as “project <slug>”')
      t.match(cells, c.kind === 'ingest' ? 'records events' : 'read-only', 'and the access (an ingest key only records events)')
      t.match(cells, row.expiresAt!.toISOString(), 'and the expiry')
    }

    const refused = [
      [{ name: 'x', project: 'no-such-project' }, /No project (&#39;|')no-such-project/],
      [{ name: 'x', expires_on: '2001-01-01' }, /in the past/],
      [{ name: 'x', expires_on: '2026-02-30' }, /not a date/],
      [{ name: 'x', expires: '12' }, /Expiry must be one of/],
      [{ name: 'x', read_only: 'maybe' }, /checkbox/],
    ] as const
    for (const [form, message] of refused) {
      for (const [list, kind, extra] of [['/console/profile/mcp-access', 'mcp', {}], ['/console/keys', 'service', { kind: 'service' }]] as const) {
        const before = await count(kind)
        const post = await owner.submit(list, list, { ...extra, ...form })
        t.equal(post.statusCode, 303)
        t.equal(post.headers.location, list, `${kind} ${JSON.stringify(form)}: back to the form`)
        t.match((await owner.get(list)).body, message, 'with a clear error')
        t.equal(await count(kind), before, 'and no key')
      }
    }
    const before = await count('ingest')
    await owner.submit('/console/keys', '/console/keys', { kind: 'ingest', name: 'x' })
    t.match((await owner.get('/console/keys')).body, /project is required for an ingest key/, 'an ingest key without a project is refused')
    t.equal(await count('ingest'), before)
  })

  t.test('an expired key is marked expired in its table', async (t) => {
    const { row } = await app.repos.apiKeys.create({ workspaceId: ws.workspace.id, userId: ws.user.id, kind: 'mcp', name: 'old one', expiresAt: new Date(app.now().getTime() - 1000) })
    const page = await owner.get('/console/profile/mcp-access')
    const html = page.body.slice(page.body.indexOf(`data-key-id="${row.id}"`))
    t.match(html.slice(0, html.indexOf('</tr>')), /class="badge bad">expired</)
  })

  t.test('the key tables show each key id, copyable', async (t) => {
    for (const url of ['/console/keys', '/console/profile/mcp-access']) {
      const page = await owner.get(url)
      const ids = [...page.body.matchAll(/data-key-id="(key_[0-9A-Za-z]+)"/g)].map((m) => m[1]!)
      t.ok(ids.length > 0, `${url} lists keys`)
      for (const id of ids) {
        t.match(page.body, `<code id="id-${id}">${id}</code>`, `${url}: the id ${id} in a <code>`)
        t.match(page.body, `data-copy="#id-${id}"`, 'with a Copy button')
      }
    }
  })

  t.test('revoking: the button leads to a confirmation naming the key; only its POST revokes', async (t) => {
    const post = await owner.submit('/console/keys', '/console/keys', { kind: 'service', name: 'to revoke' })
    const key = newKeyOf((await owner.get(String(post.headers.location))).body)!
    const row = (await app.repos.apiKeys.listForUser(ws.user.id, ['service'])).find((k) => k.display === `gds_…${key.slice(-4)}`)!
    const list = await owner.get('/console/keys')
    const link = `/console/keys/${row.id}/revoke?back=%2Fconsole%2Fkeys`
    t.match(list.body, `href="${link}"`, 'the Revoke button is a link to the confirmation')
    t.notMatch(list.body, `action="/console/keys/${row.id}/revoke"`, 'not a form that revokes at once')

    const confirm = await owner.get(link)
    t.equal(confirm.statusCode, 200)
    t.match(confirm.body, /Revoke “to revoke”\?/, 'names the key')
    t.match(confirm.body, `gds_…${key.slice(-4)}`, 'and its display form')
    t.match(confirm.body, `action="/console/keys/${row.id}/revoke"`, 'a form that revokes')
    t.match(confirm.body, 'href="/console/keys">Cancel', 'and a way back')
    await owner.get(link)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(key) })).statusCode, 200, 'opening the confirmation (twice) revoked nothing')

    const done = await owner.post(`/console/keys/${row.id}/revoke`, { _csrf: csrfOf(confirm.body), back: '/console/keys' })
    t.equal(done.statusCode, 303)
    t.equal(done.headers.location, '/console/keys')
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(key) })).statusCode, 401, 'the confirmed POST revoked it')
    const after = await owner.get('/console/keys')
    t.match(after.body, /The key is revoked/)
    t.notMatch(after.body, `href="${link}"`, 'no Revoke button for a revoked key')
    t.match((await owner.get(link)).body, /already revoked/, 'its confirmation page says so and offers no form')

    const unknown = await owner.get('/console/keys/key_nope/revoke')
    t.equal(unknown.statusCode, 404, "someone else's or no key: 404")
    t.match(unknown.headers['content-type'], /text\/html/)
  })

  t.test('an unknown console address is an HTML page; an unknown API path stays JSON', async (t) => {
    const page = await owner.get('/console/no/such/page')
    t.equal(page.statusCode, 404)
    t.match(page.headers['content-type'], /^text\/html/)
    t.match(page.body, /<h1>Page not found<\/h1>/)
    t.match(page.body, /href="\/console\/assets\/console.css"/, "in the console's look")
    t.match(page.body, new RegExp(ws.user.email.replace('.', '\\.')), 'with the signed-in navigation')
    t.match(page.headers['content-security-policy'], /script-src 'self'/, 'under the same CSP')

    const anonymous = await app.inject({ method: 'GET', url: '/console/nowhere' })
    t.equal(anonymous.statusCode, 404)
    t.match(anonymous.body, /Page not found/, 'signed out too')
    t.notMatch(anonymous.body, /Sign out/)

    const wrongMethod = await owner.get('/console/logout')
    t.equal(wrongMethod.statusCode, 405, 'a known address with another method: 405')
    t.equal(wrongMethod.headers.allow, 'POST')
    t.match(wrongMethod.headers['content-type'], /^text\/html/)

    for (const url of ['/v1/nope', '/api/v1/mcp/nope', '/consoles']) {
      const api = await app.inject({ method: 'GET', url, headers: bearer(ws.keys.service) })
      t.equal(api.statusCode, 404, `${url}: 404`)
      t.match(api.headers['content-type'], /application\/json/)
      t.same(api.json(), { error: { code: 'not_found', message: `There is no route GET ${url}.` } }, 'the DESIGN §4 error body')
    }
  })

  t.test('a failure is a 500 page without details', async (t) => {
    const listForUser = app.repos.apiKeys.listForUser
    app.repos.apiKeys.listForUser = async () => { throw new Error('relation "api_keys" secret SQL text') }
    t.teardown(() => { app.repos.apiKeys.listForUser = listForUser })
    const res = await owner.get('/console/keys')
    t.equal(res.statusCode, 500)
    t.match(res.headers['content-type'], /^text\/html/)
    t.match(res.body, /<h1>Something went wrong<\/h1>/)
    t.notMatch(res.body, /secret SQL|api_keys/, 'nothing of the error reaches the page')
  })
})
