// Members and invitations in Chromium, at 1280 and 390 px: the owner invites new@example.com as a
// reviewer of the demo project; the link, shown once (and mailed to a real SMTP server), opened
// in a fresh browser, sets a password and shows the board; the owner makes them a viewer
// (reviewing is refused) and removes them from the workspace after a page that asks (their
// session ends, their key answers 401). At 390 px the same walk brings the removed member back.
// No page scrolls sideways; screenshots are saved as /tmp/members-<page>-<width>.png.
import t from 'tap'
import type { Page } from 'playwright-core'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { startMailServer } from '../helpers/mail.ts'
import { createKey } from '../../bin/admin.ts'
import { ACTION_TIMEOUT, FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)
const SHOTS = process.env.SHOTS_DIR ?? '/tmp'

/** Nothing wider than the window. */
const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)

t.test('the done-when walk, at 1280 and 390 px', { skip }, async (t) => {
  const mailbox = await startMailServer()
  t.teardown(() => mailbox.close())
  const { app, url } = await listenTestApp(t, { config: { mail: { url: mailbox.url, from: 'growthdesk <growthdesk@example.com>' } } })
  const ws = await seedWorkspace(app, 'Acme')
  const browser = await launchChromium(t)
  const opp = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${ws.project.slug}/opportunities`, headers: bearer(ws.keys.mcp), payload: { contribution_type: 'partnership', key_information: 'A newsletter wants to feature us', reason: 'Reach', suggested_action: 'Reply' } })
  const eventId = opp.json().event_id as string

  for (const width of [1280, 390]) {
    await t.test(`${width} px`, async (t) => {
      const viewport = { width, height: width > 500 ? 900 : 844 }
      const newContext = async () => {
        const context = await browser.newContext({ viewport, ...(width < 500 ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}) })
        context.setDefaultTimeout(ACTION_TIMEOUT)
        context.setDefaultNavigationTimeout(ACTION_TIMEOUT)
        t.teardown(() => context.close())
        return context.newPage()
      }
      const shot = async (page: Page, name: string) => {
        t.equal(await sideways(page), 0, `${name}: no sideways scroll`)
        await page.screenshot({ path: `${SHOTS}/members-${name}-${width}.png`, fullPage: true })
      }

      const owner = await newContext()
      await signIn(owner, url, ws.user.email, ws.user.password)
      await clickAndWait(owner, 'header.top nav a[href="/console/members"]')
      const invite = owner.locator('form[action="/console/members/invite"]')
      await invite.locator('input[name=email]').fill('new@example.com')
      await invite.locator(`select[name="role_${ws.project.id}"]`).selectOption('reviewer')
      await shot(owner, 'page')
      await clickAndWait(owner, invite.locator('button[type=submit]'))
      t.equal(new URL(owner.url()).pathname, '/console/members/invited')
      const link = (await owner.locator('#invitation-link').innerText()).trim()
      t.match(link, new RegExp(`^${url}/console/invite/gdv_[0-9A-Za-z]{38}$`), 'the link, shown once')
      t.match(await owner.locator('.mail-state').innerText(), /sent to new@example.com by mail/)
      await shot(owner, 'invited')
      const mail = await mailbox.next()
      t.equal(mailbox.linkIn(mail), link, 'the invitation arrives by mail, with the same link')
      await owner.reload()
      t.equal(await owner.locator('#invitation-link').count(), 0, 'a reload does not show it again')

      // The invitee, in a fresh browser.
      const invitee = await newContext()
      await invitee.goto(link)
      t.match(await invitee.locator('h1').innerText(), /Join Acme/)
      t.equal(await invitee.locator('input[name=email]').inputValue(), 'new@example.com')
      await invitee.fill('input[name=password]', 'too short')
      await invitee.fill('input[name=repeat]', 'too short')
      await clickAndWait(invitee, 'form[action^="/console/invite/"] button[type=submit]')
      t.match(await invitee.locator('.field-error').innerText(), /too short: use at least 12 characters/, 'the rule beside the field')
      await shot(invitee, 'invitation')
      await invitee.fill('input[name=password]', 'a correct horse battery')
      await invitee.fill('input[name=repeat]', 'a correct horse battery')
      await clickAndWait(invitee, 'form[action^="/console/invite/"] button[type=submit]')
      t.equal(new URL(invitee.url()).pathname, `/console/projects/${ws.project.slug}/opportunities`, 'signed in, on the board')
      t.ok(await invitee.locator(`[data-event-id="${eventId}"]`).first().isVisible(), 'the board shows the project')
      t.match(await invitee.locator('form.sign-out button').innerText(), /new@example.com/)
      await shot(invitee, 'board')
      const user = (await app.repos.users.findByEmail('new@example.com'))!
      const key = (await createKey(app, { email: 'new@example.com', kind: 'service' })).key
      const review = () => app.inject({ method: 'POST', url: '/v1/tools/review_opportunity', headers: bearer(key), payload: { project: ws.project.slug, event_id: eventId, status: 'reviewing' } })
      t.equal((await review()).statusCode, 200, 'a reviewer reviews')

      // The owner makes them a viewer.
      await owner.goto(`${url}/console/members`)
      const row = owner.locator('tr[data-member="new@example.com"]')
      await row.locator(`li[data-project="${ws.project.slug}"] select[name=role]`).selectOption('viewer')
      await clickAndWait(owner, row.locator(`li[data-project="${ws.project.slug}"] form.role-form button[type=submit]`))
      t.match(await owner.locator('.flash').innerText(), /new@example.com is now viewer of demo-project/)
      await shot(owner, 'roles')
      const refused = await review()
      t.equal(refused.statusCode, 403, 'reviewing is refused at once')
      t.equal(refused.json().error.code, 'review_access_required')
      await invitee.reload()
      t.match(await invitee.locator('h1').innerText(), /Something is not right|review access/i, 'the board is refused to a viewer')

      // And removes them from the workspace, after a page that asks.
      await clickAndWait(owner, owner.locator('tr[data-member="new@example.com"] a', { hasText: 'Remove from workspace' }))
      t.match(await owner.locator('h1').innerText(), /Remove new@example.com from the workspace\?/)
      await shot(owner, 'remove')
      await clickAndWait(owner, 'form[action$="/remove"] button.danger')
      t.match(await owner.locator('.flash').innerText(), /new@example.com is removed from the workspace: 1 session ended, 1 key revoked/)
      t.equal(await owner.locator('tr[data-member="new@example.com"]').count(), 0, 'no longer listed')
      await shot(owner, 'removed')
      await invitee.reload()
      t.equal(new URL(invitee.url()).pathname, '/console/login', "the member's session has ended")
      t.equal((await review()).statusCode, 401, 'their key answers 401')
      t.ok((await app.repos.users.findAnyByEmail('new@example.com'))?.removedAt, `${user.email} is removed`)
    })
  }
})
