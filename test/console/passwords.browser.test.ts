// Passwords and sessions in Chromium, at 1280 and 390 px wide, through the pages a person uses:
// two browsers signed in, Profile lists both; a password change in one ends the other; the
// operator's `growthdesk admin reset-password --email … --json` link sets a new password once;
// and "Forgot password?" with SMTP_URL pointing at a real SMTP server started here: the mail
// arrives and its link sets a password. Every page fits its width (no sideways scroll) and its
// controls are at least 44 px tall. Photographs: /tmp/passwords-<page>-<width>.png (SHOTS_DIR
// elsewhere).
import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { addMember, freePort, buildTestApp, seedWorkspace, testDatabase, TEST_SECRETS_KEY_TEXT } from '../helpers/app.ts'
import { startMailServer } from '../helpers/mail.ts'
import { ACTION_TIMEOUT, FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, submitSignIn } from './helpers.ts'
import { main } from '../../bin/cli.ts'
import { resetPassword } from '../../bin/admin.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)
const SHOTS = process.env.SHOTS_DIR ?? '/tmp'
const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0'

async function open(browser: Browser, width: number, userAgent?: string): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width, height: width > 600 ? 800 : 844 }, ...(userAgent ? { userAgent } : {}) })
  ctx.setDefaultTimeout(ACTION_TIMEOUT)
  ctx.setDefaultNavigationTimeout(ACTION_TIMEOUT)
  return ctx.newPage()
}

/** The page shown fits its width, its controls in the main area are 44 px tall or more; photographed. */
async function looksRight(t: Test, page: Page, name: string) {
  const m = await page.evaluate(() => ({
    width: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    small: [...document.querySelectorAll('main button, main input:not([type=hidden]), main .account-links a')]
      .map((el) => ({ el, r: el.getBoundingClientRect() }))
      .filter(({ r }) => r.width > 0 && r.height < 44)
      .map(({ el, r }) => `${el.tagName.toLowerCase()} "${(el.textContent || (el as HTMLInputElement).name || '').trim()}" ${Math.round(r.height)} px`),
  }))
  t.ok(m.scrollWidth <= m.width, `${name} at ${m.width} px: no sideways scroll (${m.scrollWidth})`)
  t.same(m.small, [], `${name} at ${m.width} px: every control is 44 px tall or more`)
  fs.mkdirSync(SHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SHOTS, `passwords-${name}-${m.width}.png`), fullPage: true })
}

t.test('passwords and sessions in the browser', { skip }, async (t) => {
  const mailbox = await startMailServer()
  t.teardown(() => mailbox.close())
  const database = await testDatabase(t)
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const app = await buildTestApp(t, { database, config: { publicUrl: url, port, mail: { url: mailbox.url, from: 'growthdesk <growthdesk@example.test>' } } })
  await app.listen({ host: '127.0.0.1', port })
  const browser = await launchChromium(t)

  /**
   * `growthdesk admin reset-password --email … --json`: the command itself on PostgreSQL (it
   * runs beside the server); on the embedded database, which the server holds, its admin action.
   */
  const operatorLink = async (email: string): Promise<string> => {
    if (database.kind === 'pglite') return (await resetPassword(app, { email })).link
    let out = ''
    const code = await main(['admin', 'reset-password', '--email', email, '--json'], {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: () => true },
      env: { DATABASE_URL: database.url, SECRETS_KEY: TEST_SECRETS_KEY_TEXT, PUBLIC_URL: url },
    })
    if (code !== 0) throw new Error(`reset-password exited ${code}`)
    return (JSON.parse(out) as { link: string }).link
  }

  for (const width of [1280, 390]) {
    await t.test(`at ${width} px`, async (t) => {
      const ws = await seedWorkspace(app)
      const email = ws.user.email
      const here = await open(browser, width)
      const there = await open(browser, width, FIREFOX_ON_WINDOWS)
      const errors: string[] = []
      here.on('pageerror', (err) => errors.push(err.message))

      await here.goto(`${url}/console/login`)
      await looksRight(t, here, 'login')
      await submitSignIn(here, email, ws.user.password)
      await there.goto(`${url}/console/login`)
      await submitSignIn(there, email, ws.user.password)

      // Profile: both sessions, this browser marked, the other named.
      await here.goto(`${url}/console/profile`)
      t.equal(await here.locator('table.sessions tr[data-session]').count(), 2, 'two sessions listed')
      t.match(await here.locator('table.sessions tr.current').innerText(), /This browser/)
      t.match(await here.locator('table.sessions tr[data-session]:not(.current)').innerText(), /Firefox on Windows/)
      await looksRight(t, here, 'profile')

      // Change password: a wrong current one first, then the right one.
      await clickAndWait(here, here.locator('a', { hasText: 'Change password' }))
      await here.fill('input[name=current]', 'not my password')
      await here.fill('input[name=password]', 'a brand new passphrase')
      await here.fill('input[name=repeat]', 'a brand new passphrase')
      await clickAndWait(here, 'form[action="/console/profile/password"] button[type=submit]')
      t.equal(await here.locator('#current-error').innerText(), 'That is not your current password.')
      await looksRight(t, here, 'change-password-refused')
      await here.fill('input[name=current]', ws.user.password)
      await here.fill('input[name=password]', 'a brand new passphrase')
      await here.fill('input[name=repeat]', 'a brand new passphrase')
      await clickAndWait(here, 'form[action="/console/profile/password"] button[type=submit]')
      t.equal(new URL(here.url()).pathname, '/console/profile')
      t.match(await here.locator('.flash').innerText(), /Your password is changed\. 1 other session was signed out\./)
      t.equal(await here.locator('table.sessions tr[data-session]').count(), 1, 'only this browser is left')
      await looksRight(t, here, 'password-changed')
      await there.reload()
      t.equal(new URL(there.url()).pathname, '/console/login', 'the other browser is signed out')

      // The operator's link: sets a new password once, in a browser that was never signed in.
      const link = await operatorLink(email)
      t.match(link, new RegExp(`^${url}/console/reset/gdp_[0-9A-Za-z]{38}$`))
      const stranger = await open(browser, width)
      await stranger.goto(link)
      t.equal(await stranger.locator('h1').innerText(), 'Set a new password')
      await looksRight(t, stranger, 'reset')
      await stranger.fill('input[name=password]', 'the operator gave me this link')
      await stranger.fill('input[name=repeat]', 'the operator gave me this lnik')
      await clickAndWait(stranger, 'form[action^="/console/reset/"] button[type=submit]')
      t.match(await stranger.locator('#repeat-error').innerText(), /The two passwords differ/)
      await looksRight(t, stranger, 'reset-refused')
      await stranger.fill('input[name=password]', 'the operator gave me this link')
      await stranger.fill('input[name=repeat]', 'the operator gave me this link')
      await clickAndWait(stranger, 'form[action^="/console/reset/"] button[type=submit]')
      t.equal(new URL(stranger.url()).pathname, '/console', 'signed in')
      t.match(await stranger.locator('.flash').innerText(), /Your new password is set and you are signed in\. 1 other session was signed out\./)
      const again = await stranger.goto(link)
      t.equal(again!.status(), 410, 'the link works once')
      await looksRight(t, stranger, 'reset-used')
      await here.reload()
      t.equal(new URL(here.url()).pathname, '/console/login', 'the reset signed the first browser out too')

      // Forgot password?, by mail.
      const forgetful = await open(browser, width)
      await forgetful.goto(`${url}/console/login`)
      await clickAndWait(forgetful, forgetful.locator('a', { hasText: 'Forgot password?' }))
      await looksRight(t, forgetful, 'forgot')
      await forgetful.fill('input[name=email]', email)
      await clickAndWait(forgetful, 'form[action="/console/forgot"] button[type=submit]')
      t.match(await forgetful.locator('main').innerText(), /If an account exists for .*, a link to set a new password is on its way/)
      await looksRight(t, forgetful, 'forgot-sent')
      const mail = await mailbox.next()
      t.equal(mail.subject, 'Set a new growthdesk password')
      const mailed = mailbox.linkIn(mail)
      t.ok(mailed.startsWith(`${url}/console/reset/gdp_`), 'the mail carries a link to this server')
      await forgetful.goto(mailed)
      await forgetful.fill('input[name=password]', 'remembered at last, by mail')
      await forgetful.fill('input[name=repeat]', 'remembered at last, by mail')
      await clickAndWait(forgetful, 'form[action^="/console/reset/"] button[type=submit]')
      t.equal(new URL(forgetful.url()).pathname, '/console', 'the mailed link signs in with the new password')
      await forgetful.goto(`${url}/console/profile`)
      await looksRight(t, forgetful, 'profile-after-reset')

      // Members → Reset link (the Members page posts this form): with the mail refused, the link is shown once.
      const member = await addMember(app, ws.project.id, 'viewer', `member-${width}@acme.test`)
      mailbox.refuse(new RegExp(`member-${width}@`))
      await Promise.all([forgetful.waitForNavigation(), forgetful.evaluate((address) => {
        const form = document.createElement('form')
        form.method = 'post'
        form.action = '/console/members/reset-link'
        const fields: [string, string][] = [['_csrf', (document.querySelector('input[name=_csrf]') as HTMLInputElement).value], ['email', address]]
        for (const [name, value] of fields) {
          const input = document.createElement('input')
          input.type = 'hidden'
          input.name = name
          input.value = value
          form.append(input)
        }
        document.body.append(form)
        form.submit()
      }, member.user.email)])
      mailbox.refuse(null)
      t.match(await forgetful.locator('#reset-link').innerText(), /\/console\/reset\/gdp_/, 'the link is shown')
      t.match(await forgetful.locator('main').innerText(), /could not be sent/)
      await looksRight(t, forgetful, 'reset-link')

      // And the new password is the one that signs in.
      await clickAndWait(forgetful, 'header form.sign-out button')
      await submitSignIn(forgetful, email, 'remembered at last, by mail')
      t.equal(new URL(forgetful.url()).pathname, '/console')
      t.same(errors, [], 'no script errors')
      for (const page of [here, there, stranger, forgetful]) await page.context().close()
    })
  }
})
