// The review board's status view in Chromium: each column's count is the API's total for that
// status (with the same filters), a card's status changes in place (with scripts, by its
// keyboard shortcut: no reload, focus kept; without: the form on the card's page), several ticked cards change at once through
// review_opportunities and every one of them gets its history entry, the type filter offers
// the project's types, the search narrows the board, and at 390 px neither view scrolls
// sideways. With SHOTS_DIR set, both views are photographed there at both widths.
import fs from 'node:fs'
import t, { type Test } from 'tap'
import type { Browser, Page } from 'playwright-core'
import { addMember, bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { ACTION_TIMEOUT, FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)
const SHOTS = process.env.SHOTS_DIR
const STATUSES = ['pending', 'reviewing', 'contacted', 'adopted', 'ignored', 'done']

t.test('the board view in a browser', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const reviewer = await addMember(app, ws.project.id, 'reviewer')
  const viewer = await addMember(app, ws.project.id, 'viewer')
  const project = ws.project.id
  const tool = async (name: string, args: Record<string, unknown>, key = ws.keys.service) => {
    const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: { project, ...args } })
    if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body}`)
    return res.json().result
  }
  const texts: [string, string][] = [
    ['potential_user_opportunity', 'Acme asks for a pilot with 40 seats'],
    ['potential_user_opportunity', 'A CTO on Mastodon wants SSO before buying'],
    ['partner_channel', 'Newsletter swap with Foo Weekly (12k readers)'],
    ['partner_channel', 'Agency partner program: reseller terms requested'],
    ['community_signal', 'Forum thread compares us with a competitor on pricing'],
    ['community_signal', 'A very long key information text that goes on and on to show how a compact card clamps it: ' + 'words '.repeat(40)],
    ['content_idea', 'Write a guide on onboarding emails'],
    ['content_idea', 'Case study with Acme after the pilot'],
    ['bug_report_lead', 'A user reports the export fails, and wants a paid plan once fixed'],
  ]
  const ids: string[] = []
  for (const [type, text] of texts) ids.push((await tool('submit_opportunity', { contribution_type: type, key_information: text, reason: 'Seen in the wild.', suggested_action: 'Reach out.' })).event_id)
  await tool('review_opportunities', { event_ids: [ids[2], ids[3]], status: 'reviewing' })
  await tool('review_opportunities', { event_ids: [ids[4]], status: 'contacted', evaluation: 'useful' })
  await tool('review_opportunities', { event_ids: [ids[6]], status: 'adopted' })
  await tool('review_opportunities', { event_ids: [ids[7]], status: 'ignored', evaluation: 'not_useful' })
  await tool('review_opportunities', { event_ids: [ids[8]], status: 'done' })

  const history = async (id: string) => (await tool('get_review_history', { event_id: id })).items as { actor: { email: string } | null; before: object; after: object }[]
  const apiTotal = async (status: string, filters: Record<string, string> = {}) => (await tool('list_opportunities', { ...filters, status })).total as number
  /** The board's columns as shown: status → [count, card ids]. */
  const columns = (page: Page) =>
    page.locator('section.column').evaluateAll((cols) =>
      Object.fromEntries(cols.map((c) => [c.getAttribute('data-status'), [Number(c.querySelector('.count')!.getAttribute('data-count')), [...c.querySelectorAll('article.mini')].map((a) => a.getAttribute('data-event-id'))]]))
    ) as Promise<Record<string, [number, string[]]>>
  const countsMatchApi = async (t: Test, page: Page, filters: Record<string, string> = {}) => {
    const shown = await columns(page)
    t.same(Object.keys(shown), STATUSES, 'a column per status, in pipeline order')
    for (const status of STATUSES) t.equal(shown[status]![0], await apiTotal(status, filters), `${status}: the count is the API's total ${JSON.stringify(filters)}`)
    return shown
  }
  const noSidewaysScroll = async (t: Test, page: Page, label: string) => {
    const [scrollWidth, innerWidth] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth])
    t.ok(scrollWidth <= innerWidth, `${label}: no sideways scroll (${scrollWidth} ≤ ${innerWidth})`)
  }

  const browser: Browser = await launchChromium(t)
  const page = await newPage(browser)
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(err.message))
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) errors.push(msg.text())
  })
  // Failed loads by address (the browser asks for /favicon.ico, which the app does not serve).
  page.on('response', (res) => {
    if (res.status() >= 400 && new URL(res.url()).pathname !== '/favicon.ico') errors.push(`${res.status()} ${res.url()}`)
  })
  await signIn(page, url, reviewer.user.email, reviewer.user.password)
  const board = `${url}/console/projects/${ws.project.slug}/opportunities`

  await t.test('the status view: counts are the API totals, with and without filters', async (t) => {
    await page.goto(board)
    t.equal(await page.locator('.view-toggle a[aria-current=page]').innerText(), 'Board')
    const shown = await countsMatchApi(t, page)
    t.same(shown.reviewing![1].sort(), [ids[2], ids[3]].sort(), 'the cards are in their columns')
    t.equal(await page.locator('article.mini form.quick textarea').count(), 0, 'compact cards: no note field')
    // The type filter is a choice of the project's types.
    const options = await page.locator('form.filters select[name=type] option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
    t.same(options, ['all', 'bug_report_lead', 'community_signal', 'content_idea', 'partner_channel', 'potential_user_opportunity'])
    await page.locator('form.filters select[name=type]').selectOption('partner_channel')
    await clickAndWait(page, page.locator('form.filters button', { hasText: 'Filter' }))
    t.equal(new URL(page.url()).searchParams.get('view'), 'board', 'the filters keep the view')
    const typed = await countsMatchApi(t, page, { type: 'partner_channel' })
    t.equal(typed.reviewing![0], 2)
    t.equal(typed.pending![0], 0)
    // The search box, with the type filter back to all.
    await page.locator('form.filters select[name=type]').selectOption('all')
    await page.locator('form.filters input[name=q]').fill('ACME')
    await clickAndWait(page, page.locator('form.filters button', { hasText: 'Filter' }))
    const searched = await countsMatchApi(t, page, { q: 'ACME' })
    t.same(Object.values(searched).flatMap(([, cards]) => cards).sort(), [ids[0], ids[7]].sort(), 'the search finds both Acme cards, any case')
    t.equal(await page.locator('form.filters input[name=q]').inputValue(), 'ACME', 'the search box keeps its text')
    await page.goto(board)
  })

  await t.test('a card changes status in place, by keyboard, without a reload', async (t) => {
    await page.evaluate(() => ((window as unknown as { __samePage: boolean }).__samePage = true))
    const card = page.locator(`article.mini[data-event-id="${ids[0]}"]`)
    t.equal(await card.locator('select, button').count(), 0, 'a card has no form: the keys (or its page) set it')
    // 3 is the third status, contacted; posted as the card's review form, with its version.
    await card.locator('a.open').focus()
    await page.keyboard.press('3')
    await page.locator(`section.column[data-status=contacted] article.mini[data-event-id="${ids[0]}"]`).waitFor({ timeout: ACTION_TIMEOUT })
    t.equal(await page.evaluate(() => (window as unknown as { __samePage?: boolean }).__samePage), true, 'no page load')
    t.equal(await page.locator('.flash').innerText(), 'Review saved.')
    t.equal(await page.evaluate(() => document.activeElement?.closest('article')?.getAttribute('data-event-id')), ids[0], 'the focus stays on the card')
    await countsMatchApi(t, page)
    const entries = await history(ids[0]!)
    t.equal(entries.length, 1)
    t.match(entries[0], { actor: { email: reviewer.user.email }, before: { status: 'pending' }, after: { status: 'contacted' } })
    // The evaluation alone (u: useful).
    await page.keyboard.press('u')
    await page.locator(`article.mini[data-event-id="${ids[0]}"] .badge.eval`).waitFor({ timeout: ACTION_TIMEOUT })
    const last = (await history(ids[0]!)).at(-1)!
    t.same([last.before, last.after], [{ evaluation: '' }, { evaluation: 'useful' }], 'only the evaluation changed')
  })

  await t.test('several ticked cards change at once, each in its history', async (t) => {
    const picked = [ids[1]!, ids[5]!, ids[2]!]
    for (const id of picked) await page.locator(`input[name=event_ids][value="${id}"]`).check()
    t.match(await page.locator('#bulk .bulk-count').innerText(), /3 selected/)
    const before = Object.fromEntries(await Promise.all(picked.map(async (id) => [id, (await history(id)).length])))
    await page.locator('#bulk select[name=status]').selectOption('adopted')
    await page.locator('#bulk select[name=evaluation]').selectOption('useful')
    await page.locator('#bulk button', { hasText: 'Apply' }).click()
    await page.locator('.flash', { hasText: '3 opportunities changed.' }).waitFor({ timeout: ACTION_TIMEOUT })
    const shown = await countsMatchApi(t, page)
    for (const id of picked) {
      t.ok(shown.adopted![1].includes(id), `${id} is in the adopted column`)
      const entries = await history(id)
      t.equal(entries.length, before[id] + 1, `${id}: one more history entry`)
      t.match(entries.at(-1), { actor: { email: reviewer.user.email }, after: { status: 'adopted', evaluation: 'useful' } }, `${id}: the change is in its history`)
    }
    t.equal(await page.locator('input[name=event_ids]:checked').count(), 0, 'nothing is left ticked')
    // Nothing ticked: a message, nothing changes.
    await page.locator('#bulk select[name=status]').selectOption('done')
    await page.locator('#bulk button', { hasText: 'Apply' }).click()
    await page.locator('.flash.error', { hasText: 'Select at least one opportunity first.' }).waitFor({ timeout: ACTION_TIMEOUT })
    await countsMatchApi(t, page)
  })

  await t.test('without scripts the same forms work as plain posts', async (t) => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } })
    context.setDefaultTimeout(ACTION_TIMEOUT)
    t.teardown(() => context.close())
    const plain = await context.newPage()
    await signIn(plain, url, reviewer.user.email, reviewer.user.password)
    await plain.goto(board)
    // A card is a link to its page, whose review form returns there; the board then shows the change.
    await clickAndWait(plain, plain.locator(`article.mini[data-event-id="${ids[3]}"] a.open`))
    const form = plain.locator('form.review-detail')
    await form.locator('select[name=status]').selectOption('done')
    await clickAndWait(plain, form.locator('button', { hasText: 'Save review' }))
    t.equal(new URL(plain.url()).hash, `#${ids[3]}`, 'back at the opportunity')
    t.equal(await plain.locator('.flash').innerText(), 'Review saved.')
    await clickAndWait(plain, plain.locator('a.back-to-board').first())
    t.equal(await plain.locator(`section.column[data-status=done] article.mini[data-event-id="${ids[3]}"]`).count(), 1)
    for (const id of [ids[3]!, ids[4]!]) await plain.locator(`input[name=event_ids][value="${id}"]`).check()
    await plain.locator('#bulk select[name=status]').selectOption('pending')
    await clickAndWait(plain, plain.locator('#bulk button', { hasText: 'Apply' }))
    t.equal(await plain.locator('.flash').innerText(), '2 opportunities changed.')
    const shown = await countsMatchApi(t, plain)
    t.ok(shown.pending![1].includes(ids[3]!) && shown.pending![1].includes(ids[4]!), 'both are pending again')
    t.match((await history(ids[4]!)).at(-1), { before: { status: 'contacted' }, after: { status: 'pending' } })
  })

  await t.test('a viewer cannot use the bulk form', async (t) => {
    const viewerPage = await newPage(browser)
    await signIn(viewerPage, url, viewer.user.email, viewer.user.password)
    const before = await apiTotal('done')
    const status = await viewerPage.evaluate(async ([action, id]) => {
      const csrf = (document.querySelector('input[name=_csrf]') as HTMLInputElement).value
      const res = await fetch(action!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf, event_ids: id!, status: 'done' }), redirect: 'manual' })
      return res.status
    }, [`/console/projects/${ws.project.slug}/opportunities/bulk-review`, ids[0]!])
    t.equal(status, 403, 'refused')
    t.equal(await apiTotal('done'), before, 'nothing changed')
    await viewerPage.context().close()
  })

  await t.test('both views at 1280 and 390 px: no sideways scroll', async (t) => {
    if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true })
    for (const [width, height] of [[1280, 800], [390, 844]] as const) {
      await page.setViewportSize({ width, height })
      for (const view of ['board', 'list']) {
        await page.goto(`${board}?view=${view}`)
        await noSidewaysScroll(t, page, `${view} at ${width}px`)
        if (SHOTS) await page.screenshot({ path: `${SHOTS}/board-${view}-${width}.png`, fullPage: true })
      }
    }
    await page.setViewportSize({ width: 1200, height: 900 })
  })

  t.same(errors, [], 'no script errors')
})
