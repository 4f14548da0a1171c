// The review board in Chromium: opportunities submitted through the API appear (as text, never
// markup), filters work, a review saved in the browser is what the API then returns, the history
// names the reviewer, and a viewer gets an error page on the board but can open the metrics.
import t from 'tap'
import type { Page } from 'playwright-core'
import { addMember, bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

const XSS = '<img src=x onerror="window.__pwned=1"> thread on a forum'

/** The event ids of the cards on the board, in page order. */
const cardIds = (page: Page) => page.locator('article.opp').evaluateAll((els) => els.map((e) => e.getAttribute('data-event-id')))

async function filter(page: Page, fields: { status?: string; type?: string }) {
  const form = page.locator('form.filters')
  if (fields.status) await form.locator('select[name=status]').selectOption(fields.status)
  if (fields.type) await form.locator('select[name=type]').selectOption(fields.type)
  await clickAndWait(page, form.locator('button', { hasText: 'Filter' }))
}

t.test('review board in a browser', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const api = `/api/v1/mcp/projects/${ws.project.id}/opportunities`
  const reviewer = await addMember(app, ws.project.id, 'reviewer')
  const viewer = await addMember(app, ws.project.id, 'viewer')

  const submit = async (fields: Record<string, string>) => {
    const res = await app.inject({ method: 'POST', url: api, headers: bearer(ws.keys.mcp), payload: { reason: 'Seen in the wild.', suggested_action: 'Reach out.', ...fields } })
    if (res.statusCode !== 201) throw new Error(`submit: ${res.statusCode} ${res.body}`)
    return res.json().event_id as string
  }
  const a = await submit({ contribution_type: 'potential_user_opportunity', key_information: 'Acme wants a pilot', source_url: 'https://acme.example/post' })
  const b = await submit({ contribution_type: 'partner_channel', key_information: 'Newsletter swap with Foo' })
  const c = await submit({ contribution_type: 'potential_user_opportunity', key_information: XSS })
  // The API refuses a non-http(s) source_url outright, so no such link can reach the board.
  const js = await app.inject({ method: 'POST', url: api, headers: bearer(ws.keys.mcp), payload: { contribution_type: 'potential_user_opportunity', key_information: 'x', reason: 'y', suggested_action: 'z', source_url: 'javascript:window.__pwned=2' } })
  t.equal(js.statusCode, 400, 'a javascript: source_url is refused')
  t.equal(js.json().error.details[0].path, 'source_url')
  const d = await submit({ contribution_type: 'community_signal', key_information: 'Old lead' })
  const ignore = await app.inject({ method: 'PATCH', url: `${api}/${d}/review`, headers: bearer(ws.keys.mcp), payload: { status: 'ignored' } })
  t.equal(ignore.statusCode, 200)
  const fromApi = async (query = '') => (await app.inject({ method: 'GET', url: `${api}${query}`, headers: bearer(ws.keys.mcp) })).json()

  const browser = await launchChromium(t)
  const page = await newPage(browser)
  const dialogs: string[] = []
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  await signIn(page, url, reviewer.user.email, reviewer.user.password)
  const board = `${url}/console/projects/${ws.project.slug}/opportunities`

  await t.test('the board lists what the API submitted, as text', async (t) => {
    await clickAndWait(page, page.locator('main a', { hasText: 'Review board' }))
    t.equal(page.url(), board, 'the home page links to the board')
    t.equal(await page.locator('.view-toggle a[aria-current=page]').innerText(), 'Board', 'the Board view first')
    // The full review forms are in the List view; the filters keep it.
    await clickAndWait(page, page.locator('.view-toggle a', { hasText: 'List' }))
    t.equal(new URL(page.url()).searchParams.get('view'), 'list')
    t.same((await cardIds(page)).sort(), [a, b, c, d].sort(), 'all four opportunities')
    t.match(await page.locator('main').innerText(), /4 opportunities/)
    const card = page.locator(`article.opp[data-event-id="${c}"]`)
    t.match(await card.innerText(), XSS, 'markup in a submission is shown as text')
    t.equal(await page.locator('main img').count(), 0, 'and creates no element')
    t.equal(await page.locator('a[href^="javascript:" i]').count(), 0, 'a javascript: source_url is not rendered as a link')
    t.equal(await page.locator(`article.opp[data-event-id="${a}"] a[href="https://acme.example/post"]`).count(), 1, 'an https source_url is')
    t.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, 'nothing ran')
  })

  await t.test('filters', async (t) => {
    await filter(page, { status: 'ignored' })
    t.equal(new URL(page.url()).searchParams.get('status'), 'ignored')
    t.same(await cardIds(page), [d], 'status=ignored lists the ignored one')
    t.match(await page.locator('main').innerText(), /1 opportunities/)
    await filter(page, { status: 'pending' })
    t.same((await cardIds(page)).sort(), [a, b, c].sort(), 'status=pending lists the other three')
    t.equal(await page.locator('form.filters select[name=status]').inputValue(), 'pending', 'the filter keeps its value')
    await filter(page, { type: 'partner_channel' })
    t.same(await cardIds(page), [b], 'type and status together')
    await filter(page, { type: 'all', status: 'contacted' })
    t.same(await cardIds(page), [], 'nothing contacted yet')
    await filter(page, { status: 'pending' })
  })

  await t.test('a review saved in the browser is what the API returns', async (t) => {
    const pendingUrl = page.url()
    const card = page.locator(`article.opp[data-event-id="${a}"]`)
    await card.locator('select[name=evaluation]').selectOption('useful')
    await card.locator('select[name=status]').selectOption('contacted')
    await card.locator('textarea[name=note]').fill('Called them.\nDemo on Friday.')
    await clickAndWait(page, card.locator('button', { hasText: 'Save review' }))
    const after = new URL(page.url())
    t.equal(after.pathname + after.search, new URL(pendingUrl).pathname + new URL(pendingUrl).search, 'back on the filtered board')
    t.equal(after.hash, `#${a}`, 'at the reviewed card')
    t.equal(await page.locator('.flash').innerText(), 'Review saved.')
    t.same((await cardIds(page)).sort(), [b, c].sort(), 'no longer pending')

    const contacted = await fromApi('?status=contacted')
    t.equal(contacted.total, 1)
    t.match(contacted.items[0], { event_id: a, evaluation: 'useful', status: 'contacted', review_note: 'Called them.\nDemo on Friday.' })

    // Saving untouched changes nothing.
    await clickAndWait(page, page.locator(`article.opp[data-event-id="${b}"] button`, { hasText: 'Save review' }))
    t.equal(await page.locator('.flash').innerText(), 'Nothing changed.')
    const history = await app.inject({ method: 'GET', url: `${api}/${b}/history`, headers: bearer(ws.keys.mcp) })
    t.same(history.json().items, [], 'no review recorded')

    // Changing only the status of a card with a multi-line note leaves the note alone.
    await filter(page, { status: 'contacted' })
    const again = page.locator(`article.opp[data-event-id="${a}"]`)
    t.equal(await again.locator('textarea[name=note]').inputValue(), 'Called them.\nDemo on Friday.', 'the note is shown')
    t.equal(await again.locator('select[name=evaluation]').inputValue(), 'useful')
    await again.locator('select[name=status]').selectOption('adopted')
    await clickAndWait(page, again.locator('button', { hasText: 'Save review' }))
    t.equal(await page.locator('.flash').innerText(), 'Review saved.')
    const adopted = await fromApi('?status=adopted')
    t.match(adopted.items, [{ event_id: a, status: 'adopted', evaluation: 'useful', review_note: 'Called them.\nDemo on Friday.' }])
    const apiHistory = (await app.inject({ method: 'GET', url: `${api}/${a}/history`, headers: bearer(ws.keys.mcp) })).json()
    t.equal(apiHistory.items.length, 2)
    t.same(apiHistory.items[1].after, { status: 'adopted' }, 'the second review changed the status only')
  })

  await t.test('History names the reviewer and the changes', async (t) => {
    await filter(page, { status: 'adopted' })
    await clickAndWait(page, page.locator(`article.opp[data-event-id="${a}"] a`, { hasText: 'History' }))
    t.equal(new URL(page.url()).pathname, `/console/projects/${ws.project.slug}/opportunities/${a}/history`)
    t.equal(await page.locator('h1').innerText(), 'Review history')
    const rows = await page.locator('main table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td as HTMLElement).innerText.trim())))
    t.equal(rows.length, 2, 'two reviews')
    const [first, second] = rows as string[][]
    t.equal(first![1], reviewer.user.email, "the reviewer's email")
    t.match(first![2], /evaluation: "" → "useful"/)
    t.match(first![2], /status: "pending" → "contacted"/)
    t.match(first![2], /review_note: "" → "Called them.\\nDemo on Friday."/)
    t.equal(second![1], reviewer.user.email)
    t.match(second![2], /^status: "contacted" → "adopted"$/)
  })

  await t.test('a viewer gets an error page on the board and can open the metrics', async (t) => {
    const viewerPage = await newPage(browser)
    await signIn(viewerPage, url, viewer.user.email, viewer.user.password)
    const res = await viewerPage.goto(board)
    t.equal(res?.status(), 403)
    t.equal(await viewerPage.locator('h1').innerText(), 'Something is not right')
    t.match(await viewerPage.locator('main').innerText(), /needs review access/)
    t.equal(await viewerPage.locator('article.opp').count(), 0, 'no opportunity shown')
    t.notMatch(await viewerPage.content(), /Acme wants a pilot/)
    const metrics = await viewerPage.goto(`${url}/console/projects/${ws.project.slug}/metrics`)
    t.equal(metrics?.status(), 200)
    t.match(await viewerPage.locator('h1').innerText(), /Daily metrics/)
    // A forged review from the viewer's session is refused too, and changes nothing.
    const forged = await viewerPage.evaluate(async ([action]) => {
      const csrf = (document.querySelector('input[name=_csrf]') as HTMLInputElement).value
      const res = await fetch(action!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf, status: 'done' }), redirect: 'manual' })
      return res.status
    }, [`/console/projects/${ws.project.slug}/opportunities/${b}/review`])
    t.equal(forged, 403, 'a review from the viewer session is refused')
    t.match((await fromApi()).items.find((o: { event_id: string }) => o.event_id === b), { status: 'pending', evaluation: '' }, 'the opportunity is unchanged')
    await viewerPage.context().close()
  })

  t.same(dialogs, [], 'no dialog ever opened')
})
