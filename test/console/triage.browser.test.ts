// Triage in Chromium (issue 28): on the board `a` assigns the focused card to me (and again to
// nobody) and `t` opens its panel at the tag field, where typing a tag and Enter tags it (both
// seen over REST); on the detail page "Merge into this" from the similar list leaves the target
// with 2 reports and Unmerge restores it, the merged one shows its banner; a saved view appears in
// the board's Views menu and applying it filters the board; at 1280 and 390 px the detail page
// with its similar, merged, tags, assignee and comments sections fits (nothing sideways at 390).
// Screenshots go to /tmp/triage-*.png (or SHOTS_DIR).
import t from 'tap'
import type { Page } from 'playwright-core'
import { addMember, bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { ACTION_TIMEOUT, FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)
const SHOTS = process.env.SHOTS_DIR || '/tmp'

t.test('triage: a and t on the board, merge and unmerge, saved views, 1280 and 390 px', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const reviewer = await addMember(app, ws.project.id, 'reviewer', `dana.reyes-${Date.now()}@example.com`)
  // A member whose email is far wider than a phone: the assignee select and the history must still fit.
  const wide = await addMember(app, ws.project.id, 'reviewer', 'maximilian-alexander.von-der-langen-strasse.partnerships@example-enterprise-customer.com')
  const api = `/api/v1/mcp/projects/${ws.project.id}/opportunities`
  const tool = async (name: string, args: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(ws.keys.service), payload: { project: ws.project.id, ...args } })
    if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body}`)
    return res.json().result
  }
  const rest = async (id: string) => (await app.inject({ method: 'GET', url: `${api}/${id}`, headers: bearer(ws.keys.mcp) })).json()
  const submit = async (type: string, text: string, reason = `Seen in the wild: ${text.slice(0, 40)}.`) =>
    (await tool('submit_opportunity', { contribution_type: type, key_information: text, reason, suggested_action: 'Write to them this week and offer a call.' })).event_id as string
  const filler = ['Newsletter swap with Foo Weekly (12k readers)', 'A CTO on Mastodon wants an on-premise version', 'Write a guide on onboarding emails', 'Forum thread compares us with a competitor on pricing', 'Podcast host offers a guest slot in March']
  for (const [i, text] of filler.entries()) await submit(['partner_channel', 'potential_user_opportunity', 'content_idea', 'community_signal', 'partner_channel'][i]!, text)
  const target = await submit('potential_user_opportunity', 'Acme Corp asks for a pilot with 40 seats, SSO and audit logs before the end of the quarter', 'Their head of IT wrote twice; budget is approved for Q3 and they compare us with two others.')
  const duplicate = await submit('potential_user_opportunity', 'Acme Corp asks again for a pilot with 40 seats, SSO and audit logs (forum post)', 'The same request on the community forum, by their IT lead.')
  const third = await submit('potential_user_opportunity', 'Acme Corp pilot: 40 seats with SSO and audit logs, asked by their CFO on LinkedIn', 'A third report of the same lead.')
  await tool('tag_opportunity', { event_id: target, add: ['enterprise', 'sso'] })
  await tool('assign_opportunity', { event_id: target, assignee: ws.user.email })
  await tool('add_comment', { event_id: target, body: 'Dana: I spoke to their IT lead, they want a pilot in June.\nLet us prepare the SSO docs first.' })

  const browser = await launchChromium(t)
  const errors: string[] = []
  const open = async (width: number, height: number) => {
    const context = await browser.newContext({ viewport: { width, height } })
    context.setDefaultTimeout(ACTION_TIMEOUT)
    context.setDefaultNavigationTimeout(ACTION_TIMEOUT)
    t.teardown(() => context.close())
    const page = await context.newPage()
    page.on('pageerror', (err) => errors.push(err.message))
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) errors.push(msg.text())
    })
    await signIn(page, url, reviewer.user.email, reviewer.user.password)
    return page
  }
  const sizes = (p: Page) => p.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
  const board = `${url}/console/projects/${ws.project.slug}/opportunities`
  const detail = (id: string) => `${url}/console/projects/${ws.project.slug}/opportunities/${id}`
  const page = await open(1280, 800)
  const card = (id: string) => page.locator(`article.mini[data-event-id="${id}"]`)
  const activeCard = () => page.evaluate(() => document.activeElement?.closest('article.mini')?.getAttribute('data-event-id') ?? null)

  await t.test('a assigns the focused card to me, and again to nobody', async (t) => {
    await page.goto(board)
    t.match(await page.locator('#shortcut-hint').innerText(), /a assign to me · t tag/, 'the hint names a and t')
    await page.locator('body').press('j')
    const first = (await activeCard())!
    t.ok(first, 'a card has the focus')
    await page.keyboard.press('a')
    await page.waitForFunction(([id, me]) => document.querySelector(`article.mini[data-event-id="${id}"]`)?.getAttribute('data-assignee') === me, [first, reviewer.user.id] as const)
    t.match(await rest(first), { assignee: { id: reviewer.user.id, email: reviewer.user.email } }, 'assigned to me, seen over REST')
    t.equal(await card(first).locator('.avatar.me').innerText().then((s) => s.slice(0, 2)), 'DR', 'the card shows my initials')
    t.equal(await activeCard(), first, 'the focus stays on the card')
    await page.keyboard.press('a')
    await page.waitForFunction((id) => document.querySelector(`article.mini[data-event-id="${id}"]`)?.getAttribute('data-assignee') === '', first)
    t.match(await rest(first), { assignee: null }, 'a again: nobody')
    await page.keyboard.press('?')
    const help = await page.locator('dialog#shortcuts').innerText()
    t.match(help, /Assign to me/)
    t.match(help, /Tag: open the card at its tag field/)
    t.notMatch(help, /coming/, 'nothing is "coming" any more')
    await page.keyboard.press('Escape')
  })

  await t.test('t opens the panel at the tag field; a tag and Enter tag it', async (t) => {
    await page.goto(board)
    await card(target).locator('a.open').focus()
    await page.keyboard.press('t')
    const input = page.locator('dialog#card-panel form.tag-add input[name=add]')
    await input.waitFor({ state: 'visible' })
    await page.waitForFunction(() => document.activeElement?.matches('dialog#card-panel form.tag-add input[name=add]'))
    t.pass('the tag field has the focus')
    await page.keyboard.type('hot-lead')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => [...document.querySelectorAll('dialog#card-panel .chip > span')].some((s) => s.textContent === 'hot-lead'))
    t.match(await rest(target), { tags: ['enterprise', 'hot-lead', 'sso'] }, 'tagged, seen over REST')
    await page.waitForFunction(() => document.activeElement?.matches('dialog#card-panel form.tag-add input[name=add]'))
    t.pass('the panel is back at the tag field, for another tag')
    t.ok(await card(target).locator('.chip-sm', { hasText: 'hot-lead' }).isVisible(), 'the card behind shows the tag')
    // a in the panel: the panel's opportunity (it was the owner's; now mine).
    await page.locator('dialog#card-panel a.panel-full').focus()
    await page.keyboard.press('a')
    await page.locator('dialog#card-panel .assignee-now', { hasText: reviewer.user.email }).waitFor()
    t.match(await rest(target), { assignee: { id: reviewer.user.id } }, 'a in the panel assigns its opportunity')
    await page.screenshot({ path: `${SHOTS}/triage-panel-1280.png` })
    await page.keyboard.press('Escape')
    await page.locator('dialog#card-panel').waitFor({ state: 'hidden' })
    await page.screenshot({ path: `${SHOTS}/triage-board-1280.png` })
  })

  await t.test('merge from the similar list, the merged banner, unmerge', async (t) => {
    await page.goto(detail(target))
    const similar = page.locator(`section.similar li[data-event-id="${duplicate}"]`)
    t.ok(await similar.isVisible(), 'the duplicate is listed as similar')
    t.match(await similar.locator('.score').innerText(), /^\d+%$/, 'with its score')
    await page.screenshot({ path: `${SHOTS}/triage-detail-1280.png`, fullPage: true })
    await clickAndWait(page, similar.locator('button', { hasText: 'Merge into this' }))
    t.match(await page.locator('.flash.ok').innerText(), /^Merged: /)
    t.match(await rest(target), { report_count: 2 }, 'report_count 2, seen over REST')
    t.match(await rest(duplicate), { merged_into: target })
    t.match(await page.locator('section.merged h2').innerText(), /Merged reports \(1\)/)
    await clickAndWait(page, page.locator(`section.similar li[data-event-id="${third}"] button`, { hasText: 'Merge into this' }))
    t.match(await rest(target), { report_count: 3 })
    await page.screenshot({ path: `${SHOTS}/triage-detail-merged-1280.png`, fullPage: true })
    const s = await sizes(page)
    t.ok(s.scrollWidth <= s.innerWidth, `no sideways scroll at 1280 (${s.scrollWidth})`)

    await page.goto(detail(duplicate))
    t.match(await page.locator('.merged-banner').innerText(), /Merged into Acme Corp asks for a pilot/, 'the banner')
    t.equal(await page.locator('form.review-detail, form.tag-add, form.assign-form').count(), 0, 'no review, tag or assign form')
    await page.screenshot({ path: `${SHOTS}/triage-merged-banner-1280.png`, fullPage: true })
    await clickAndWait(page, page.locator('.merged-banner button', { hasText: 'Unmerge' }))
    t.match(await rest(duplicate), { merged_into: null }, 'unmerged from its banner')
    t.match(await rest(target), { report_count: 2 })
    await page.goto(detail(target))
    await clickAndWait(page, page.locator(`section.merged li[data-event-id="${third}"] button`, { hasText: 'Unmerge' }))
    t.match(await rest(target), { report_count: 1 }, 'unmerging restores')
    t.match(await rest(third), { merged_into: null })
    t.equal(await page.locator('section.merged').count(), 0, 'no Merged reports section')
    // Merged again, for the pages at 390 px below.
    await clickAndWait(page, page.locator(`section.similar li[data-event-id="${third}"] button`, { hasText: 'Merge into this' }))
  })

  await t.test('a saved view is in the board\'s Views menu and applying it filters the board', async (t) => {
    await page.goto(board)
    await page.locator('form.filters select[name=tag]').selectOption('hot-lead')
    await clickAndWait(page, page.locator('form.filters button[type=submit]'))
    t.equal(await page.locator('article.mini').count(), 1, 'the tag filter: one card')
    await page.locator('details.views-menu > summary').click()
    await page.locator('.views-pop input[name=name]').fill('Hot leads')
    await page.screenshot({ path: `${SHOTS}/triage-views-1280.png` })
    await clickAndWait(page, page.locator('.views-pop button', { hasText: 'Save view' }))
    t.match(await page.locator('.flash.ok').innerText(), /View “Hot leads” saved/)
    t.match(await page.locator('details.views-menu > summary').innerText(), /View:\s*Hot leads/, 'the menu names the current view')
    await page.goto(board)
    t.ok((await page.locator('article.mini').count()) > 1, 'unfiltered: every card')
    await page.locator('details.views-menu > summary').click()
    await clickAndWait(page, page.locator('.views-pop a', { hasText: 'Hot leads' }))
    t.equal(await page.locator('article.mini').count(), 1, 'the view applied: one card')
    t.equal(await page.locator('article.mini').getAttribute('data-event-id'), target)
    t.equal(new URL(page.url()).searchParams.get('tag'), 'hot-lead')
  })

  await t.test('at 390 × 844: the detail page, the merged banner and the board with its menu fit', async (t) => {
    const phone = await open(390, 844)
    for (const [name, address] of [['detail', detail(target)], ['merged-banner', detail(third)], ['board', board]] as const) {
      await phone.goto(address)
      if (name === 'board') await phone.locator('details.views-menu > summary').click()
      const s = await sizes(phone)
      t.ok(s.scrollWidth <= s.innerWidth, `${name}: nothing sideways (${s.scrollWidth} ≤ ${s.innerWidth})`)
      await phone.screenshot({ path: `${SHOTS}/triage-${name}-390.png`, fullPage: true })
      // The top of the page at a size one can read.
      await phone.screenshot({ path: `${SHOTS}/triage-${name}-390-top.png`, fullPage: true, clip: { x: 0, y: 0, width: 390, height: 1300 } })
    }
    await phone.goto(detail(target))
    await phone.screenshot({ path: `${SHOTS}/triage-detail-390-middle.png`, fullPage: true, clip: { x: 0, y: 1300, width: 390, height: 1300 } })
    await phone.goto(detail(target))
    for (const section of ['section.similar', 'section.merged', 'section.tags', 'section.assignee', 'section.comments']) {
      const box = await phone.locator(section).first().boundingBox()
      t.ok(box && box.x >= 0 && box.x + box.width <= 390, `${section} fits`)
    }
    // The panel at 390 too, with a change by the member of the widest email in its history.
    const tagged = await app.inject({ method: 'POST', url: `${api}/${target}/tags`, headers: bearer(wide.keys.mcp), payload: { add: ['wide-history'] } })
    t.equal(tagged.statusCode, 200)
    await phone.goto(board)
    await phone.locator(`article.mini[data-event-id="${target}"] a.open`).click()
    await phone.locator('dialog#card-panel').waitFor({ state: 'visible' })
    const inPanel = await phone.locator('dialog#card-panel .panel-body').evaluate((el) => {
      // The element reaching furthest right, to name it when something does not fit.
      let widest = ''
      let right = 0
      for (const e of el.querySelectorAll('*')) {
        const r = e.getBoundingClientRect().right
        if (r > right) [right, widest] = [r, `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} "${(e.textContent ?? '').trim().slice(0, 40)}"`]
      }
      return { scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, widest, right: Math.round(right) }
    })
    t.ok(inPanel.scrollWidth <= inPanel.clientWidth, `nothing sideways in the panel (${inPanel.scrollWidth} ≤ ${inPanel.clientWidth}; furthest right: ${inPanel.widest} at ${inPanel.right})`)
    await phone.screenshot({ path: `${SHOTS}/triage-panel-390.png` })
  })

  t.same(errors, [], 'no script errors')
})
