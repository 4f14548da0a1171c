// Shared by the console tests: the Chromium skip rule and launcher for the browser tests, and a
// cookie-keeping agent over app.inject for the HTTP-only ones.
import fs from 'node:fs'
import type { FastifyInstance } from 'fastify'
import type { Browser, Page } from 'playwright-core'

interface Teardown {
  teardown(fn: () => unknown): void
}

/** Debian's Chromium (CI installs it); CHROMIUM_PATH may point elsewhere. Never downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
/** Generous: the machine running the suite may be loaded. */
export const ACTION_TIMEOUT = 30_000
/** A whole browser test file (tap's default of 120 s is too short on a busy machine). */
export const FILE_TIMEOUT = 900_000

/**
 * The skip rule for browser tests. Without Chromium the browser tests are skipped (with the
 * reason), except in CI (CI=true), which installs Chromium: there its absence is a failure.
 * Returns the skip reason, or false when the browser tests should run.
 */
export function browserSkip(t: { fail(message: string): unknown }): string | false {
  if (fs.existsSync(CHROMIUM)) return false
  if (process.env.CI === 'true') {
    t.fail(`CI=true but Chromium is missing at ${CHROMIUM}: CI must install it (apt-get install chromium) for the console browser tests`)
    return 'Chromium missing (failure reported above)'
  }
  return `Chromium is not installed at ${CHROMIUM} (set CI=true to make this a failure); console browser tests skipped`
}

/** One Chromium for the test file, closed at teardown. Never downloads a browser. */
export async function launchChromium(t: Teardown): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    timeout: 120_000,
  })
  t.teardown(() => browser.close())
  return browser
}

/** A fresh browser context (own cookies) and page with generous timeouts. */
export async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
  context.setDefaultTimeout(ACTION_TIMEOUT)
  context.setDefaultNavigationTimeout(ACTION_TIMEOUT)
  return context.newPage()
}

/** Fills the sign-in form of the page currently shown and submits it. */
export async function submitSignIn(page: Page, email: string, password: string) {
  await page.fill('input[name=email]', email)
  await page.fill('input[name=password]', password)
  await Promise.all([page.waitForNavigation(), page.click('form[action="/console/login"] button[type=submit]')])
}

/** Opens the sign-in page and signs in; ends on the console home page. */
export async function signIn(page: Page, base: string, email: string, password: string) {
  await page.goto(`${base}/console/login`)
  await submitSignIn(page, email, password)
  if (new URL(page.url()).pathname !== '/console') throw new Error(`sign-in as ${email} ended on ${page.url()}`)
}

/** Clicks something that submits a form or follows a link, and waits for the next page. */
export async function clickAndWait(page: Page, selector: string | ReturnType<Page['locator']>) {
  const target = typeof selector === 'string' ? page.locator(selector) : selector
  const [response] = await Promise.all([page.waitForNavigation(), target.click()])
  return response
}

export const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? ''

type InjectResponse = Awaited<ReturnType<FastifyInstance['inject']>>

/** A cookie-keeping client over app.inject (optionally from a given IP, with a given User-Agent), following nothing. */
export class Agent {
  readonly cookies = new Map<string, string>()
  private readonly app: FastifyInstance
  private readonly ip: string
  private readonly userAgent: Record<string, string>
  constructor(app: FastifyInstance, ip = '127.0.0.1', userAgent?: string) {
    this.app = app
    this.ip = ip
    this.userAgent = userAgent === undefined ? {} : { 'user-agent': userAgent }
  }

  private remember(res: InjectResponse) {
    for (const c of res.cookies as { name: string; value: string; expires?: Date; maxAge?: number }[]) {
      const gone = (c.expires && c.expires.getTime() <= Date.now()) || c.maxAge === 0
      if (gone) this.cookies.delete(c.name)
      else this.cookies.set(c.name, c.value)
    }
    return res
  }

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  async get(url: string) {
    return this.remember(await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader(), ...this.userAgent }, remoteAddress: this.ip }))
  }

  async post(url: string, form: Record<string, string>) {
    return this.remember(
      await this.app.inject({
        method: 'POST',
        url,
        headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', ...this.userAgent },
        payload: new URLSearchParams(form).toString(),
        remoteAddress: this.ip,
      })
    )
  }

  /** GETs a page and POSTs one of its forms with the page's CSRF token plus the given fields. */
  async submit(pageUrl: string, action: string, form: Record<string, string>) {
    const page = await this.get(pageUrl)
    if (page.statusCode !== 200) throw new Error(`${pageUrl} answered ${page.statusCode}`)
    return this.post(action, { _csrf: csrfOf(page.body), ...form })
  }

  async signIn(email: string, password: string, next?: string) {
    const res = await this.submit('/console/login', '/console/login', { email, password, ...(next !== undefined ? { next } : {}) })
    if (res.statusCode !== 302) throw new Error(`sign-in as ${email} answered ${res.statusCode}`)
    return res
  }
}
