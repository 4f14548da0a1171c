// The board people choose (issue 28, item 6) in Chromium: with 50+ opportunities the board fits
// a 1280 × 800 screen (its columns scroll inside themselves); a card opens its detail view (a
// panel over the board, by mouse and by keyboard); keyboard triage sets status and evaluation
// (seen over REST) without firing while typing; drag and drop moves a card between columns, and
// a card changed meanwhile is refused and put back; at 390 px one column is shown at a time and
// nothing scrolls sideways; without JavaScript the card's page and its form still work.
// Screenshots go to /tmp/board-*.png (or SHOTS_DIR).
import t from 'tap'
import type { Page } from 'playwright-core'
import { addMember, bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { ACTION_TIMEOUT, FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)
const SHOTS = process.env.SHOTS_DIR || '/tmp'

t.test('the board: fits, detail view, keyboard triage, drag and drop, phone, no JS', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const reviewer = await addMember(app, ws.project.id, 'reviewer')
  const api = `/api/v1/mcp/projects/${ws.project.id}/opportunities`
  const tool = async (name: string, args: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(ws.keys.service), payload: { project: ws.project.id, ...args } })
    if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body}`)
    return res.json().result
  }
  const types = ['potential_user_opportunity', 'partner_channel', 'community_signal', 'content_idea', 'bug_report_lead']
  const texts = [
    'Acme asks for a pilot with 40 seats and SSO before the end of the quarter',
    'Newsletter swap with Foo Weekly (12k readers)',
    'Forum thread compares us with a competitor on pricing, and people ask for a free tier',
    'A CTO on Mastodon wants an on-premise version',
    'Write a guide on onboarding emails',
  ]
  const ids: string[] = []
  for (let i = 0; i < 56; i++) {
    const long = i === 55 ? ` — and a long story after it: ${'the team wants to know more about exports, roles and the API; '.repeat(6)}THE END` : ''
    const { event_id } = await tool('submit_opportunity', { contribution_type: types[i % types.length], key_information: `${texts[i % texts.length]} #${i}${long}`, reason: `Reason number ${i}: seen in the wild.`, suggested_action: `Reach out (${i}).` })
    ids.push(event_id)
  }
  // Spread over the columns; ids[55] (the newest, with the long text) and most stay pending.
  await tool('review_opportunities', { event_ids: ids.slice(30, 38), status: 'reviewing' })
  await tool('review_opportunities', { event_ids: ids.slice(38, 43), status: 'contacted', evaluation: 'useful' })
  await tool('review_opportunities', { event_ids: ids.slice(43, 46), status: 'adopted', evaluation: 'useful' })
  await tool('review_opportunities', { event_ids: ids.slice(46, 50), status: 'ignored', evaluation: 'not_useful' })
  await tool('review_opportunities', { event_ids: ids.slice(50, 52), status: 'done' })
  const opportunity = async (id: string) => (await tool('list_opportunities', { page_size: 100 })).items.find((o: { event_id: string }) => o.event_id === id)
  const rest = async (id: string) => (await app.inject({ method: 'GET', url: `${api}?page_size=100`, headers: bearer(ws.keys.mcp) })).json().items.find((o: { event_id: string }) => o.event_id === id)

  const browser = await launchChromium(t)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  context.setDefaultTimeout(ACTION_TIMEOUT)
  context.setDefaultNavigationTimeout(ACTION_TIMEOUT)
  t.teardown(() => context.close())
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(err.message))
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) errors.push(msg.text())
  })
  await signIn(page, url, reviewer.user.email, reviewer.user.password)
  const board = `${url}/console/projects/${ws.project.slug}/opportunities`
  const card = (id: string) => page.locator(`article.mini[data-event-id="${id}"]`)
  const columnOf = (p: Page, id: string) => p.locator(`article.mini[data-event-id="${id}"]`).evaluate((el) => el.closest('section.column')!.getAttribute('data-status'))
  const activeCard = () => page.evaluate(() => document.activeElement?.closest('article.mini')?.getAttribute('data-event-id') ?? null)
  const sizes = (p: Page) => p.evaluate(() => ({ scrollHeight: document.documentElement.scrollHeight, scrollWidth: document.documentElement.scrollWidth, innerHeight: window.innerHeight, innerWidth: window.innerWidth }))

  await t.test('at 1280 × 800 the board fits the screen; long columns scroll inside themselves', async (t) => {
    await page.goto(board)
    await page.screenshot({ path: `${SHOTS}/board-1280.png`, fullPage: true })
    const s = await sizes(page)
    t.ok(s.scrollHeight <= 1.5 * s.innerHeight, `the page is ${s.scrollHeight} px tall (≤ 1.5 × ${s.innerHeight})`)
    t.ok(s.scrollWidth <= s.innerWidth, `no sideways scroll (${s.scrollWidth} ≤ ${s.innerWidth})`)
    t.equal(await page.locator('section.column').evaluateAll((cols) => cols.filter((c) => (c as HTMLElement).offsetParent !== null).length), 6, 'six columns side by side')
    const pending = page.locator('section.column[data-status=pending] .cards-scroll')
    const scroll = await pending.evaluate((el) => ({ scrollHeight: el.scrollHeight, clientHeight: el.clientHeight, overflow: getComputedStyle(el).overflowY }))
    t.ok(scroll.scrollHeight > scroll.clientHeight && scroll.overflow === 'auto', `the pending column scrolls inside itself (${scroll.scrollHeight} > ${scroll.clientHeight})`)
    t.equal(await page.locator('section.column[data-status=pending] article.mini').count(), 20, 'its first 20 cards (Per column)')
    const more = page.locator('section.column[data-status=pending] .more a')
    await more.scrollIntoViewIfNeeded()
    t.ok(await more.isVisible(), 'and its link to the rest, reached by scrolling the column')
    t.match(await more.innerText(), /All 34 in the List view/)
    t.equal(await page.locator('article.mini select, article.mini button, article.mini form').count(), 0, 'no form on a card')
    t.equal(await page.locator('article.mini a.open').count(), await page.locator('article.mini').count(), 'every card links to its page')
    // The text is clamped to a few lines, not cut to one.
    const clamp = await card(ids[20]!).locator('a.open').evaluate((el) => ({ clamp: getComputedStyle(el).webkitLineClamp, lines: Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight)) }))
    t.equal(clamp.clamp, '4', 'clamped at 4 lines')
    t.ok(clamp.lines >= 2 && clamp.lines <= 4, `a longer text takes ${clamp.lines} lines`)
    t.ok(await page.locator('#shortcut-hint').isVisible(), 'the shortcuts are shown')
  })

  await t.test('a card opens its detail view in a panel; Esc closes it, back at the card', async (t) => {
    await page.goto(board)
    await card(ids[55]!).locator('a.open').click()
    const panel = page.locator('dialog#card-panel')
    await panel.waitFor({ state: 'visible' })
    t.match(await panel.locator('h1').innerText(), /THE END$/, 'the full text, not clamped')
    t.match(await panel.innerText(), /Reason number 55: seen in the wild\./, 'the reason')
    t.match(await panel.innerText(), /Reach out \(55\)\./, 'the suggested action')
    t.equal(await panel.locator('form.review-detail input[name=version]').inputValue(), '1', 'the review form with the version')
    t.equal(await panel.locator('a.panel-full').getAttribute('href'), await card(ids[55]!).locator('a.open').getAttribute('href').then((h) => new URL(h!, url).href), 'a link to the page itself')
    await page.screenshot({ path: `${SHOTS}/board-panel-1280.png` })
    await page.keyboard.press('Escape')
    await panel.waitFor({ state: 'hidden' })
    t.equal(await activeCard(), ids[55], 'the focus is back on the card')
  })

  await t.test('keyboard triage: j/k, o, 1–6, u/n/0, x, ?', async (t) => {
    await page.goto(board)
    await page.locator('body').press('j')
    const first = await page.locator('section.column[data-status=pending] article.mini').first().getAttribute('data-event-id')
    t.equal(await activeCard(), first, 'j: the first card')
    await page.keyboard.press('j')
    const second = await page.locator('section.column[data-status=pending] article.mini').nth(1).getAttribute('data-event-id')
    t.equal(await activeCard(), second, 'j: the next one')
    await page.keyboard.press('k')
    t.equal(await activeCard(), first, 'k: back')
    await page.keyboard.press('ArrowDown')
    t.equal(await activeCard(), second, '↓ too')
    // Typing in the search box is typing.
    await page.locator('form.filters input[name=q]').focus()
    await page.keyboard.type('jk3')
    t.equal(await page.locator('form.filters input[name=q]').inputValue(), 'jk3', 'keys in a text field are text')
    t.equal((await rest(second!)).status, 'pending', 'and set nothing')
    await card(second!).locator('a.open').focus()
    // o opens, Esc closes.
    await page.keyboard.press('o')
    await page.locator('dialog#card-panel').waitFor({ state: 'visible' })
    t.match(await page.locator('dialog#card-panel h1').innerText(), /#\d+/, 'o opens the card')
    await page.keyboard.press('Escape')
    await page.locator('dialog#card-panel').waitFor({ state: 'hidden' })
    // Enter on the card's link opens it too.
    await page.keyboard.press('Enter')
    await page.locator('dialog#card-panel').waitFor({ state: 'visible' })
    await page.keyboard.press('Escape')
    await page.locator('dialog#card-panel').waitFor({ state: 'hidden' })
    // 3: contacted, in place, with the version as precondition.
    await page.evaluate(() => ((window as unknown as { __samePage: boolean }).__samePage = true))
    await page.keyboard.press('3')
    await page.locator(`section.column[data-status=contacted] article.mini[data-event-id="${second}"]`).waitFor()
    t.match(await rest(second!), { status: 'contacted', version: 2 }, 'seen over REST')
    t.equal(await page.evaluate(() => (window as unknown as { __samePage?: boolean }).__samePage), true, 'no page load')
    t.equal(await activeCard(), second, 'the focus follows the card')
    t.equal(await page.locator('#live-status').textContent(), 'Review saved.', 'said in the live region')
    // u, then 0: the evaluation.
    await page.keyboard.press('u')
    await card(second!).locator('.badge.eval.useful').waitFor()
    t.match(await rest(second!), { evaluation: 'useful', status: 'contacted', version: 3 })
    await page.keyboard.press('n')
    await card(second!).locator('.badge.eval.not_useful').waitFor()
    await page.keyboard.press('0')
    await page.waitForFunction((id) => document.querySelector(`article.mini[data-event-id="${id}"]`)?.getAttribute('data-evaluation') === '', second)
    t.match(await rest(second!), { evaluation: '', version: 5 }, 'useful → not_useful → none')
    // The panel stays with the triage: open, set a status, the panel shows the new state.
    await page.keyboard.press('o')
    await page.locator('dialog#card-panel').waitFor({ state: 'visible' })
    await page.keyboard.press('2')
    await page.locator(`section.column[data-status=reviewing] article.mini[data-event-id="${second}"]`).waitFor()
    await page.locator('dialog#card-panel .badges .badge.reviewing').waitFor()
    t.equal((await rest(second!)).status, 'reviewing', 'set from the panel')
    await page.keyboard.press('Escape')
    // x ticks for the bulk bar.
    await page.locator('dialog#card-panel').waitFor({ state: 'hidden' })
    await page.keyboard.press('x')
    t.ok(await card(second!).locator('input[name=event_ids]').isChecked(), 'x ticks the card')
    t.match(await page.locator('#bulk .bulk-count').innerText(), /1 selected/)
    await page.keyboard.press('x')
    t.notOk(await card(second!).locator('input[name=event_ids]').isChecked(), 'x again unticks it')
    // ? shows the help.
    await page.keyboard.press('?')
    await page.locator('dialog#shortcuts').waitFor({ state: 'visible' })
    t.match(await page.locator('dialog#shortcuts').innerText(), /Status: contacted[\s\S]*Evaluation: not useful/)
    await page.keyboard.press('Escape')
    await page.locator('dialog#shortcuts').waitFor({ state: 'hidden' })
    // A stale card (changed over REST since the board was drawn) is refused and shown as it is.
    const stale = await page.locator('section.column[data-status=pending] article.mini').first().getAttribute('data-event-id')
    await app.inject({ method: 'PATCH', url: `${api}/${stale}/review`, headers: bearer(ws.keys.mcp), payload: { note: 'someone else' } })
    await card(stale!).locator('a.open').focus()
    await page.keyboard.press('5')
    await page.locator('.flash.error').waitFor()
    t.match(await page.locator('.flash.error').innerText(), /changed by someone else/)
    t.match(await rest(stale!), { status: 'pending', version: 2 }, 'nothing changed')
    t.equal(await columnOf(page, stale!), 'pending', 'still shown in pending')
  })

  await t.test('drag and drop between columns; a card changed meanwhile goes back', async (t) => {
    await page.goto(board)
    const id = await page.locator('section.column[data-status=pending] article.mini').nth(2).getAttribute('data-event-id')
    t.equal(await card(id!).getAttribute('draggable'), 'true', 'cards are draggable on a wide screen')
    await page.dragAndDrop(`article.mini[data-event-id="${id}"]`, 'section.column[data-status=adopted] h2')
    await page.locator(`section.column[data-status=adopted] article.mini[data-event-id="${id}"]`).waitFor()
    await page.locator('.flash', { hasText: 'Review saved.' }).waitFor()
    t.match(await rest(id!), { status: 'adopted', version: 2 }, 'seen over REST')
    t.equal(await page.locator('section.column[data-status=adopted] .count').getAttribute('data-count'), String((await tool('list_opportunities', { status: 'adopted' })).total), 'the count follows')
    const other = await page.locator('section.column[data-status=pending] article.mini').nth(3).getAttribute('data-event-id')
    await app.inject({ method: 'PATCH', url: `${api}/${other}/review`, headers: bearer(ws.keys.mcp), payload: { note: 'moved meanwhile' } })
    await page.dragAndDrop(`article.mini[data-event-id="${other}"]`, 'section.column[data-status=done] h2')
    await page.locator('.flash.error').waitFor()
    t.match(await page.locator('.flash.error').innerText(), /Not saved: this opportunity was changed by someone else/)
    t.equal(await columnOf(page, other!), 'pending', 'the card is back in its column')
    t.match(await rest(other!), { status: 'pending', review_note: 'moved meanwhile' })
  })

  await t.test('at 390 × 844: one column at a time, a switcher, nothing sideways', async (t) => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 } })
    phone.setDefaultTimeout(ACTION_TIMEOUT)
    t.teardown(() => phone.close())
    const p = await phone.newPage()
    p.on('pageerror', (err) => errors.push(err.message))
    await signIn(p, url, reviewer.user.email, reviewer.user.password)
    await p.goto(board)
    const shown = () => p.locator('section.column').evaluateAll((cols) => cols.filter((c) => (c as HTMLElement).offsetParent !== null).map((c) => c.getAttribute('data-status')))
    t.same(await shown(), ['pending'], 'one column: the first with cards')
    const s = await sizes(p)
    t.ok(s.scrollWidth <= s.innerWidth, `no sideways scroll (${s.scrollWidth} ≤ ${s.innerWidth})`)
    t.ok(await p.locator('.column-switch').isVisible(), 'a status switcher')
    t.notOk(await p.locator('#shortcut-hint').isVisible(), 'no keyboard hint on a phone')
    t.equal(await p.locator('article.mini').first().getAttribute('draggable'), 'false', 'no dragging on a phone')
    await p.screenshot({ path: `${SHOTS}/board-390.png`, fullPage: true })
    await p.locator('.column-switch a[data-col=ignored]').click()
    t.same(await shown(), ['ignored'], 'the switcher shows another column')
    t.equal(new URL(p.url()).searchParams.get('col'), 'ignored', 'and the address says which')
    await p.screenshot({ path: `${SHOTS}/board-390-ignored.png` })
    await p.locator('section.column[data-status=ignored] article.mini a.open').first().click()
    await p.locator('dialog#card-panel').waitFor({ state: 'visible' })
    const dialogBox = await p.locator('dialog#card-panel').boundingBox()
    t.ok(dialogBox && dialogBox.width <= 390 && dialogBox.x >= 0, 'the panel fits the phone')
    await p.screenshot({ path: `${SHOTS}/board-panel-390.png` })
    await p.keyboard.press('Escape')
    const detail = await p.locator('section.column[data-status=ignored] article.mini a.open').first().getAttribute('href')
    await p.goto(new URL(detail!, url).href)
    const d = await sizes(p)
    t.ok(d.scrollWidth <= d.innerWidth, `the detail page fits (${d.scrollWidth} ≤ ${d.innerWidth})`)
    await p.screenshot({ path: `${SHOTS}/board-detail-390.png`, fullPage: true })
  })

  await t.test('without JavaScript: the switcher, the card page and its form, the bulk bar', async (t) => {
    const plainContext = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } })
    plainContext.setDefaultTimeout(ACTION_TIMEOUT)
    t.teardown(() => plainContext.close())
    const plain = await plainContext.newPage()
    await signIn(plain, url, reviewer.user.email, reviewer.user.password)
    await plain.goto(board)
    await clickAndWait(plain, plain.locator('.column-switch a[data-col=contacted]'))
    t.same(await plain.locator('section.column').evaluateAll((cols) => cols.filter((c) => (c as HTMLElement).offsetParent !== null).map((c) => c.getAttribute('data-status'))), ['contacted'], 'the switcher is links')
    await plain.setViewportSize({ width: 1280, height: 800 })
    await plain.goto(board)
    const id = await plain.locator('section.column[data-status=pending] article.mini').first().getAttribute('data-event-id')
    await clickAndWait(plain, plain.locator(`article.mini[data-event-id="${id}"] a.open`))
    t.equal(new URL(plain.url()).pathname, `/console/projects/${ws.project.slug}/opportunities/${id}`, 'the card is a link to its page')
    await plain.screenshot({ path: `${SHOTS}/board-detail-1280.png`, fullPage: true })
    const form = plain.locator('form.review-detail')
    await form.locator('select[name=status]').selectOption('reviewing')
    await form.locator('select[name=evaluation]').selectOption('useful')
    await form.locator('textarea[name=note]').fill('Plain form.')
    await clickAndWait(plain, form.locator('button[type=submit]'))
    t.equal(await plain.locator('.flash').innerText(), 'Review saved.')
    t.equal(new URL(plain.url()).pathname, `/console/projects/${ws.project.slug}/opportunities/${id}`, 'back on its page')
    t.match(await rest(id!), { status: 'reviewing', evaluation: 'useful', review_note: 'Plain form.' }, 'seen over REST')
    await clickAndWait(plain, plain.locator('a.back-to-board').last())
    t.equal(new URL(plain.url()).pathname, `/console/projects/${ws.project.slug}/opportunities`, 'back to the board')
    const two = await plain.locator('section.column[data-status=pending] article.mini').evaluateAll((as) => as.slice(0, 2).map((a) => a.getAttribute('data-event-id')!))
    for (const box of two) await plain.locator(`input[name=event_ids][value="${box}"]`).check()
    await plain.locator('#bulk select[name=status]').selectOption('done')
    await clickAndWait(plain, plain.locator('#bulk button', { hasText: 'Apply' }))
    t.equal(await plain.locator('.flash').innerText(), '2 opportunities changed.')
    for (const box of two) t.equal((await opportunity(box)).status, 'done', `${box} done`)
  })

  t.same(errors, [], 'no script errors')
})
