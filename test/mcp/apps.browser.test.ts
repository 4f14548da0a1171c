// The MCP App views in Chromium, inside a host made with ext-apps' own host side
// (`@modelcontextprotocol/ext-apps/app-bridge`: AppBridge over PostMessageTransport, in the page,
// from the installed package through an import map): each view is the HTML that resources/read
// returns from the started server, loaded in a sandboxed iframe (scripts only, an opaque origin)
// under the CSP the spec builds from the view's declared `_meta.ui.csp`. The host proxies the
// view's tools/call to the server through the SDK's v2 client, refusing tools whose visibility
// leaves out "app" as hosts must. Checked: initialisation, tool input and result, a review from
// a button (seen over REST, with its history), a refusal shown in place, paging, the chart and
// its partial day, the host's theme, 1280 and 390 px, ≤ 500 px with no nested scroll, 44 px
// targets, AA contrast. Screenshots: /tmp/views-*.png.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import type { Frame, Page } from 'playwright-core'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { isToolVisibilityAppOnly } from '@modelcontextprotocol/ext-apps/app-bridge'
import { addMember, bearer, ingestEvents, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { FILE_TIMEOUT, browserSkip, launchChromium } from '../console/helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

const UI = { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } }
const NODE_MODULES = path.join(import.meta.dirname, '../../node_modules')
/** What the host page may load from node_modules: the bridge and what it imports, no more. */
const SERVED = ['@modelcontextprotocol/ext-apps/dist/', '@modelcontextprotocol/client/dist/', '@modelcontextprotocol/core/dist/', 'zod/v4/', 'eventsource/dist/', 'eventsource-parser/dist/', 'pkce-challenge/dist/']
const IMPORTS = {
  '@modelcontextprotocol/ext-apps/app-bridge': '/modules/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js',
  '@modelcontextprotocol/client': '/modules/@modelcontextprotocol/client/dist/index.mjs',
  '@modelcontextprotocol/client/_shims': '/modules/@modelcontextprotocol/client/dist/shimsBrowser.mjs',
  '@modelcontextprotocol/core': '/modules/@modelcontextprotocol/core/dist/index.mjs',
  '@modelcontextprotocol/core/internal': '/modules/@modelcontextprotocol/core/dist/internal.mjs',
  'zod/v4': '/modules/zod/v4/index.js',
  eventsource: '/modules/eventsource/dist/index.js',
  'eventsource-parser': '/modules/eventsource-parser/dist/index.js',
  'eventsource-parser/stream': '/modules/eventsource-parser/dist/stream.js',
  'pkce-challenge': '/modules/pkce-challenge/dist/index.browser.js',
}

/** The host page: a chat-like column, and `mountView` which embeds a view the way a host does. */
const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>test host</title>
<script type="importmap">${JSON.stringify({ imports: IMPORTS })}</script>
<style>
body { margin: 0; padding: 12px 0; font: 14px system-ui, sans-serif; background: #f3f3f1; color: #222; }
body.dark { background: #101114; color: #ddd; }
.turn { margin: 0 12px 8px; }
iframe { display: block; width: 100%; height: 80px; border: 0; }
.frame { margin: 0 12px; border: 1px solid #c8c8c8; border-radius: 12px; overflow: hidden; }
body.dark .frame { border-color: #3b3d44; }
</style></head>
<body><p class="turn" id="turn">Assistant: here is what I found.</p><div class="frame" id="slot"></div>
<script type="module">
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge'

async function proxy(method, params) {
  const res = await fetch('/proxy', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method, params }) })
  const body = await res.json()
  if (body.error) throw new Error(body.error.message)
  return body.result
}

/** The CSP of the extension's spec, built from a view's declared _meta.ui.csp. */
function policy(csp = {}) {
  const list = (d) => (d ?? []).join(' ')
  const r = list(csp.resourceDomains)
  return ["default-src 'none'", "script-src 'self' 'unsafe-inline' " + r, "style-src 'self' 'unsafe-inline' " + r,
    "connect-src 'self' " + list(csp.connectDomains), "img-src 'self' data: " + r, "font-src 'self' " + r, "media-src 'self' data: " + r,
    'frame-src ' + (list(csp.frameDomains) || "'none'"), "object-src 'none'", 'base-uri ' + (list(csp.baseUriDomains) || "'self'")].join('; ')
}

window.mountView = async ({ html, csp, args, result, hostContext }) => {
  document.body.classList.toggle('dark', hostContext.theme === 'dark')
  const slot = document.getElementById('slot')
  const iframe = document.createElement('iframe')
  iframe.setAttribute('sandbox', 'allow-scripts')
  iframe.title = 'MCP App view'
  slot.replaceChildren(iframe)
  const bridge = new AppBridge(null, { name: 'growthdesk-test-host', version: '1.0.0' }, { serverTools: {}, serverResources: {}, logging: {} }, { hostContext })
  bridge.oncalltool = (params) => proxy('tools/call', params)
  bridge.onreadresource = (params) => proxy('resources/read', params)
  window.sizes = []
  bridge.onsizechange = ({ height }) => {
    if (height != null) {
      window.sizes.push(height)
      iframe.style.height = height + 'px'
    }
  }
  window.logs = []
  bridge.onloggingmessage = (message) => window.logs.push(message)
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve })
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow))
  iframe.srcdoc = html.replace(/<head>/i, '<head><meta http-equiv="Content-Security-Policy" content="' + policy(csp) + '">')
  await initialized
  await bridge.sendToolInput({ arguments: args })
  await bridge.sendToolResult(result)
  window.bridge = bridge
}
window.hostReady = true
</script></body></html>`

interface ToolResult { content: { type: string; text?: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean }

/** A host server: the page, the bridge's modules, and /proxy to the MCP server through `client`. */
async function startHost(t: Test, clientOf: () => Client): Promise<string> {
  const tools = new Map<string, { _meta?: Record<string, unknown> }>()
  const server = http.createServer(async (req, res) => {
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' })
      res.end(body)
    }
    const url = new URL(req.url ?? '/', 'http://host')
    if (url.pathname === '/') return send(200, 'text/html; charset=utf-8', HOST_PAGE)
    if (url.pathname === '/favicon.ico') return send(204, 'image/x-icon', '')
    if (url.pathname.startsWith('/modules/')) {
      const rel = decodeURIComponent(url.pathname.slice('/modules/'.length))
      const file = path.join(NODE_MODULES, rel)
      if (!SERVED.some((prefix) => rel.startsWith(prefix)) || rel.includes('..') || !fs.existsSync(file)) return send(404, 'text/plain', 'not served')
      return send(200, 'text/javascript; charset=utf-8', fs.readFileSync(file))
    }
    if (url.pathname === '/proxy' && req.method === 'POST') {
      let raw = ''
      for await (const chunk of req) raw += chunk
      const { method, params } = JSON.parse(raw)
      try {
        const client = clientOf()
        if (method === 'tools/call') {
          // A host lets a view call only this server's tools whose visibility includes "app".
          if (tools.size === 0) for (const tool of (await client.listTools()).tools) tools.set(tool.name, tool)
          const tool = tools.get(params.name)
          const visibility = (tool?._meta?.ui as { visibility?: string[] } | undefined)?.visibility
          if (!tool || (visibility && !visibility.includes('app'))) return send(200, 'application/json', JSON.stringify({ error: { message: `The host refuses ${params.name} to a view.` } }))
          return send(200, 'application/json', JSON.stringify({ result: await client.callTool(params) }))
        }
        if (method === 'resources/read') return send(200, 'application/json', JSON.stringify({ result: await client.readResource(params) }))
        return send(200, 'application/json', JSON.stringify({ error: { message: `not proxied: ${method}` } }))
      } catch (err) {
        return send(200, 'application/json', JSON.stringify({ error: { message: (err as Error).message } }))
      }
    }
    send(404, 'text/plain', 'not found')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function connect(t: Test, url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'growthdesk-test-host', version: '1.0.0' }, { capabilities: { extensions: UI }, versionNegotiation: { mode: { pin: '2026-07-28' } } })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(key) } }))
  t.teardown(() => client.close())
  return client
}

/** The view's frame, once the host page has mounted it and it has drawn at its final height. */
async function mount(page: Page, view: { html: string; csp: unknown }, args: Record<string, unknown>, result: ToolResult, hostContext: Record<string, unknown>): Promise<Frame> {
  await page.waitForFunction(() => (window as unknown as { hostReady?: boolean }).hostReady === true)
  await page.evaluate((options) => (window as unknown as { mountView(o: unknown): Promise<void> }).mountView(options), { ...view, args, result, hostContext })
  const frame = page.frames().find((f) => f !== page.mainFrame())
  if (!frame) throw new Error('no view frame')
  await settle(page)
  return frame
}

/** Waits until the view has reported the same height twice in a row, a moment apart. */
async function settle(page: Page) {
  let last = -1
  for (let i = 0; i < 50; i++) {
    await page.waitForTimeout(120)
    const height = await page.locator('iframe').evaluate((el) => el.getBoundingClientRect().height)
    if (height === last) return
    last = height
  }
}

/** What a page of the view breaks of the brief: over 500 px, scrolling inside, small targets, low contrast. */
async function layoutProblems(page: Page, frame: Frame): Promise<string[]> {
  const problems: string[] = []
  const iframeHeight = await page.locator('iframe').evaluate((el) => el.getBoundingClientRect().height)
  if (iframeHeight > 500) problems.push(`the view is ${iframeHeight} px tall`)
  const inside = await frame.evaluate(() => ({ scroll: document.documentElement.scrollHeight, view: window.innerHeight, scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth }))
  if (inside.scroll > inside.view + 1) problems.push(`it scrolls inside: ${inside.scroll} px of content in ${inside.view} px`)
  if (inside.scrollWidth > inside.width + 1) problems.push(`it scrolls sideways: ${inside.scrollWidth} px in ${inside.width} px`)
  problems.push(...await frame.evaluate(() => {
    const found: string[] = []
    for (const el of document.querySelectorAll('button, textarea')) {
      const box = el.getBoundingClientRect()
      if (box.width === 0) continue
      if (box.width < 44 || box.height < 44) found.push(`${el.textContent?.trim() || el.tagName}: ${Math.round(box.width)}×${Math.round(box.height)} px, under 44`)
    }
    const rgb = (color: string) => (color.match(/[\d.]+/g) ?? []).map(Number)
    const luminance = ([r, g, b]: number[]) => {
      const c = [r!, g!, b!].map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
      return 0.2126 * c[0]! + 0.7152 * c[1]! + 0.0722 * c[2]!
    }
    const background = (el: Element | null): number[] => {
      for (let node = el; node; node = node.parentElement) {
        const [r, g, b, a = 1] = rgb(getComputedStyle(node).backgroundColor)
        if (a > 0.5 && r !== undefined) return [r, g!, b!]
      }
      return rgb(getComputedStyle(document.documentElement).backgroundColor)
    }
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const el = text.parentElement
      if (!el || !text.textContent?.trim() || el.closest('.sr-only, [hidden], title')) continue
      const style = getComputedStyle(el)
      if (style.visibility === 'hidden' || el.getClientRects().length === 0) continue
      const fg = rgb(el.closest('svg') ? style.fill : style.color)
      const [l1, l2] = [luminance(fg), luminance(background(el))].sort((a, b) => b - a)
      const ratio = (l1! + 0.05) / (l2! + 0.05)
      const large = parseFloat(style.fontSize) >= 24 || (parseFloat(style.fontSize) >= 18.66 && Number(style.fontWeight) >= 700)
      const opacity = Number(style.opacity)
      if (ratio < (large ? 3 : 4.5) && opacity === 1 && !(el as HTMLButtonElement).disabled) found.push(`"${text.textContent.trim().slice(0, 30)}": contrast ${ratio.toFixed(2)}`)
    }
    return found
  }))
  return problems
}

t.test('MCP App views in an app-bridge host', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const viewer = await addMember(app, ws.project.id, 'viewer')
  const project = ws.project.slug
  const api = `/api/v1/mcp/projects/${ws.project.id}/opportunities`
  const texts = [
    'Acme Robotics asked in the community forum whether the API can export review history to their data warehouse; three of their engineers upvoted the thread and one offered to pilot it.',
    'Newsletter swap with Foo Weekly (12k subscribers, mostly indie founders)',
    'A reviewer on a comparison site called the onboarding "confusing past step two"',
    'Pricing page visitors from universities: 40 this week',
    'Partnership lead: Bar Analytics wants a two-way integration with the review pipeline and a co-marketing webinar in spring',
    'Old lead from the meetup',
    'Hacker News comment asking for a self-hosted option',
    'Support ticket: a customer would pay for SSO',
  ]
  const types = ['potential_user_opportunity', 'partner_channel', 'community_signal', 'potential_user_opportunity', 'partner_channel', 'community_signal', 'community_signal', 'potential_user_opportunity']
  const ids: string[] = []
  for (const [i, key_information] of texts.entries()) {
    const res = await app.inject({ method: 'POST', url: api, headers: bearer(ws.keys.mcp), payload: { contribution_type: types[i], key_information, reason: 'Seen in the wild.', suggested_action: 'Reach out.' } })
    if (res.statusCode !== 201) throw new Error(`submit: ${res.statusCode} ${res.body}`)
    ids.push(res.json().event_id as string)
  }
  // Events over the last days, today's included (the project's time zone is UTC).
  const day = (ago: number, hour: number) => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - ago, hour)).toISOString()
  const events: [string, string, string][] = []
  for (let ago = 8; ago >= 1; ago--) {
    for (let u = 0; u < (ago % 3) + 1; u++) events.push(['signup', `new-${ago}-${u}@example.test`, day(ago, 9)])
    for (let u = 0; u < 12 + ((ago * 7) % 9); u++) events.push(['daily_use', `user-${u}@example.test`, day(ago, 10)], ['daily_use', `user-${u}@example.test`, day(ago, 15)])
  }
  events.push(['signup', 'today@example.test', new Date(Date.now() - 60_000).toISOString()], ['daily_use', 'user-1@example.test', new Date(Date.now() - 60_000).toISOString()])
  await ingestEvents(app, ws.keys.ingest, events)

  const owner = await connect(t, url, ws.keys.service)
  const viewerClient = await connect(t, url, viewer.keys.mcp)
  let hostClient = owner
  const host = await startHost(t, () => hostClient)

  const read = async (uri: string) => {
    const { contents } = await owner.readResource({ uri })
    t.equal(contents.length, 1, `${uri}: one document`)
    const content = contents[0] as { text: string; mimeType: string; _meta?: { ui?: { csp?: unknown } } }
    t.equal(content.mimeType, 'text/html;profile=mcp-app')
    return { html: content.text, csp: content._meta?.ui?.csp }
  }
  const board = await read('ui://growthdesk/board')
  const dailyOps = await read('ui://growthdesk/daily-ops')
  const listed = (await owner.listTools()).tools
  t.ok(isToolVisibilityAppOnly(listed.find((tool) => tool.name === 'review_opportunity_from_view')!), 'app-bridge reads the review tool as app-only')
  t.notOk(listed.filter((tool) => !isToolVisibilityAppOnly(tool)).some((tool) => tool.name === 'review_opportunity_from_view'), 'so a host keeps it from the model')

  const listArgs = { project, status: 'pending', page_size: 6 }
  const listing = await owner.callTool({ name: 'list_opportunities', arguments: listArgs }) as ToolResult
  const opsArgs = { project }
  const ops = await owner.callTool({ name: 'get_daily_ops', arguments: opsArgs }) as ToolResult
  const rest = async (name: string, args: Record<string, unknown>) => (await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(ws.keys.service), payload: { project, ...args } })).json().result

  const browser = await launchChromium(t)
  const open = async (width: number, colorScheme: 'light' | 'dark') => {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme })
    context.setDefaultTimeout(30_000)
    const page = await context.newPage()
    const requests: string[] = []
    const errors: string[] = []
    page.on('request', (request) => requests.push(request.url()))
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) errors.push(message.text())
    })
    page.on('pageerror', (err) => errors.push(err.message))
    await page.goto(host)
    t.teardown(() => context.close())
    return { page, requests, errors }
  }
  const contextFor = (theme: 'light' | 'dark', width: number) => ({ theme, displayMode: 'inline', availableDisplayModes: ['inline'], platform: 'web', locale: 'en-US', timeZone: 'UTC', containerDimensions: { maxHeight: 500, width } })

  await t.test('the board at 1280 px: the listing, and a review from its buttons, seen over REST', async (t) => {
    const { page, requests, errors } = await open(1280, 'light')
    const frame = await mount(page, board, listArgs, listing, contextFor('light', 1256))
    const initialised = await page.evaluate(() => {
      const bridge = (window as unknown as { bridge: { getAppVersion(): unknown; getAppCapabilities(): unknown } }).bridge
      return { version: bridge.getAppVersion(), capabilities: bridge.getAppCapabilities() }
    })
    t.match(initialised, { version: { name: 'growthdesk board' }, capabilities: { availableDisplayModes: ['inline'] } }, 'the view initialised as the ext-apps App')
    const rows = frame.locator('li.row[data-id]')
    t.ok(await rows.count() >= 3, `${await rows.count()} rows on the first page`)
    const first = listing.structuredContent!.items as { event_id: string; key_information: string }[]
    t.equal(await rows.first().getAttribute('data-id'), first[0]!.event_id, 'in the listing\'s order')
    t.equal(await rows.first().locator('.text').innerText(), first[0]!.key_information)
    t.match(await frame.locator('#summary').innerText(), /Pending · 8 in all/)
    t.same(await layoutProblems(page, frame), [], 'within the brief')
    await page.screenshot({ path: '/tmp/views-board-1280-light.png', fullPage: true })

    const id = first[0]!.event_id
    const row = frame.locator(`li.row[data-id="${id}"]`)
    await row.getByRole('button', { name: /^Status: Pending/ }).click()
    t.equal(await row.getByRole('button', { name: 'Pending', exact: true }).getAttribute('aria-pressed'), 'true', 'the status choices mark the current one')
    const focused = () => frame.evaluate(() => (document.activeElement as HTMLElement | null)?.getAttribute('aria-label') ?? document.activeElement?.textContent)
    t.equal(await focused(), 'Pending', 'and take the focus there')
    await settle(page)
    t.same(await layoutProblems(page, frame), [], 'the status choices too')
    await page.screenshot({ path: '/tmp/views-board-1280-status.png', fullPage: true })
    await row.getByRole('button', { name: 'Contacted' }).click()
    await row.locator('.state', { hasText: 'Contacted' }).waitFor()
    t.match(await frame.locator('#status').innerText(), /Saved: Contacted/)
    t.equal(await focused(), 'Status: Contacted. Change it', 'the focus is back on the status button')
    await row.getByRole('button', { name: 'Useful', exact: true }).click()
    await row.locator('.state', { hasText: 'Contacted · Useful' }).waitFor()
    t.equal(await row.getByRole('button', { name: 'Useful', exact: true }).getAttribute('aria-pressed'), 'true')
    await row.getByRole('button', { name: 'Add a note' }).click()
    await row.locator('textarea').fill('Called them; pilot in May')
    await settle(page)
    t.same(await layoutProblems(page, frame), [], 'the note editor too')
    await page.screenshot({ path: '/tmp/views-board-1280-note.png', fullPage: true })
    await row.getByRole('button', { name: 'Save note' }).click()
    await row.locator('.state', { hasText: 'noted' }).waitFor()

    const saved = (await app.inject({ method: 'GET', url: `${api}?status=contacted`, headers: bearer(ws.keys.mcp) })).json().items
    t.match(saved, [{ event_id: id, status: 'contacted', evaluation: 'useful', review_note: 'Called them; pilot in May' }], 'REST sees the review')
    const history = await rest('get_review_history', { event_id: id })
    t.same(history.items.map((e: { after: unknown }) => e.after), [{ status: 'contacted' }, { evaluation: 'useful' }, { review_note: 'Called them; pilot in May' }], 'three history entries, one a button')
    t.match(history.items[0], { actor: { email: ws.user.email } }, 'by the key\'s user')
    t.same(errors, [], 'no error and no CSP violation in the page')
    t.same(requests.filter((r) => !r.startsWith(host)), [], 'the view loaded nothing from anywhere')
  })

  await t.test('the board at 390 px, dark: paging through what fits, and loading the next page', async (t) => {
    const { page, errors } = await open(390, 'dark')
    const frame = await mount(page, board, { project, page_size: 5 }, await owner.callTool({ name: 'list_opportunities', arguments: { project, page_size: 5 } }) as ToolResult, contextFor('dark', 366))
    t.equal(await frame.evaluate(() => document.documentElement.dataset.theme), 'dark', 'the host\'s theme')
    t.same(await layoutProblems(page, frame), [], 'within the brief')
    await page.screenshot({ path: '/tmp/views-board-390-dark.png', fullPage: true })
    const shown = await frame.locator('li.row[data-id]').count()
    t.ok(shown >= 2 && shown < 5, `${shown} rows fit 500 px at 390 px`)
    // A status from a button at 390 px too, seen over REST.
    const second = frame.locator('li.row[data-id]').nth(1)
    const id = (await second.getAttribute('data-id'))!
    await second.getByRole('button', { name: /^Status: / }).click()
    await settle(page)
    t.same(await layoutProblems(page, frame), [], 'the status choices fit at 390 px')
    await page.screenshot({ path: '/tmp/views-board-390-status.png', fullPage: true })
    await second.getByRole('button', { name: 'Reviewing', exact: true }).click()
    await second.locator('.state', { hasText: 'Reviewing' }).waitFor()
    t.match((await app.inject({ method: 'GET', url: `${api}?status=reviewing`, headers: bearer(ws.keys.mcp) })).json().items, [{ event_id: id, status: 'reviewing' }], 'REST sees it')
    const seen = new Set<string>()
    for (let i = 0; i < 8; i++) {
      for (const id of await frame.locator('li.row[data-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')!))) seen.add(id)
      const next = frame.getByRole('button', { name: 'Next opportunities' })
      if (await next.isDisabled()) break
      await next.click()
      await page.waitForTimeout(300)
      t.same(await layoutProblems(page, frame), [], `page ${i + 2} within the brief`)
    }
    t.equal(seen.size, 8, 'every opportunity, the last ones loaded with next_cursor')
    t.match(await frame.locator('#range').innerText(), / of 8$/)
    await frame.getByRole('button', { name: 'Previous opportunities' }).click()
    t.same(errors, [], 'no error in the page')
  })

  await t.test('a refusal is shown in place: a viewer key behind the host', async (t) => {
    hostClient = viewerClient
    t.teardown(() => { hostClient = owner })
    const { page, errors } = await open(390, 'light')
    const frame = await mount(page, board, listArgs, listing, contextFor('light', 366))
    const id = (listing.structuredContent!.items as { event_id: string }[])[2]!.event_id
    const before = (await rest('get_review_history', { event_id: id })).items.length
    await frame.locator(`li.row[data-id="${id}"]`).getByRole('button', { name: 'Not useful', exact: true }).click()
    await frame.locator('#status.error').waitFor()
    t.match(await frame.locator('#status').innerText(), /^Not saved: This needs review access to project '[^']+'; your access is viewer\.$/)
    t.equal(await frame.locator(`li.row[data-id="${id}"]`).getAttribute('class'), 'row failed')
    t.same(await layoutProblems(page, frame), [], 'within the brief')
    await page.screenshot({ path: '/tmp/views-board-390-refused.png', fullPage: true })
    t.equal((await rest('get_review_history', { event_id: id })).items.length, before, 'nothing changed')
    const refused = await viewerClient.callTool({ name: 'list_opportunities', arguments: listArgs }) as ToolResult
    t.equal(refused.isError, true)
    const again = await mount(page, board, listArgs, refused, contextFor('light', 366))
    t.match(await again.locator('#problem').innerText(), /review access/, 'a failed listing is its message')
    t.equal(await again.locator('li.row[data-id]').count(), 0)
    t.same(errors, [], 'no error in the page')
  })

  for (const [width, theme] of [[1280, 'light'], [390, 'dark']] as const) {
    await t.test(`the daily chart at ${width} px, ${theme}: three series, today marked, a window switch in place`, async (t) => {
      const { page, errors, requests } = await open(width, theme)
      const frame = await mount(page, dailyOps, opsArgs, ops, contextFor(theme, width - 24))
      t.equal(await frame.locator('section.panel').count(), 3)
      t.same(await frame.locator('section.panel h2 > span:first-child').allInnerTexts(), ['Registrations', 'Daily users', 'Events'])
      t.equal(await frame.locator('svg.chart').first().locator('rect[data-day]').count(), 7, 'a bar a day')
      const days = ops.structuredContent!.days as { date: string; registered_users: number }[]
      t.equal(await frame.locator('rect.today').count(), 3, 'today is marked in each series')
      t.equal(await frame.locator('rect.today').first().getAttribute('data-day'), days.at(-1)!.date)
      t.ok(await frame.locator('#legend').isVisible(), 'and explained')
      t.match(await frame.locator('#h-s1 .figures').innerText(), /today 1 so far/)
      t.same(await layoutProblems(page, frame), [], 'within the brief')
      await page.screenshot({ path: `/tmp/views-daily-ops-${width}-${theme}.png`, fullPage: true })
      await frame.getByRole('button', { name: '30 days' }).click()
      await frame.locator('#status.done').waitFor()
      t.equal(await frame.locator('svg.chart').first().locator('rect[data-day]').count(), 30, '30 bars after the switch')
      t.equal(await frame.getByRole('button', { name: '30 days' }).getAttribute('aria-pressed'), 'true')
      await settle(page)
      t.same(await layoutProblems(page, frame), [], '30 days within the brief')
      await page.screenshot({ path: `/tmp/views-daily-ops-${width}-${theme}-30d.png`, fullPage: true })
      t.same(errors, [], 'no error and no CSP violation')
      t.same(requests.filter((r) => !r.startsWith(host)), [], 'the view loaded nothing from anywhere')
    })
  }

  await t.test('the daily chart of a from/to range: no window pressed, a window replaces the range', async (t) => {
    const { page, errors } = await open(1280, 'light')
    const today = new Date().toISOString().slice(0, 10)
    const from = new Date(Date.now() - 9 * 86_400_000).toISOString().slice(0, 10)
    const rangeArgs = { project, from, to: today, compare: true }
    const ranged = await owner.callTool({ name: 'get_daily_ops', arguments: rangeArgs }) as ToolResult
    t.equal((ranged.structuredContent as { window: unknown }).window, null, 'a range has no window')
    const frame = await mount(page, dailyOps, rangeArgs, ranged, contextFor('light', 1256))
    t.equal(await frame.locator('svg.chart').first().locator('rect[data-day]').count(), 10, 'a bar a day of the range')
    t.equal(await frame.locator('rect.today').count(), 3, 'today is marked')
    t.same(await frame.locator('[data-window]').evaluateAll((els) => els.map((el) => el.getAttribute('aria-pressed'))), ['false', 'false'], 'neither window is pressed')
    await frame.getByRole('button', { name: '7 days' }).click()
    await frame.locator('#status.done').waitFor()
    t.equal(await frame.locator('svg.chart').first().locator('rect[data-day]').count(), 7, 'the 7-day window replaced the range')
    t.equal(await frame.getByRole('button', { name: '7 days' }).getAttribute('aria-pressed'), 'true')
    t.same(errors, [], 'no error')
  })

  await t.test('the host turns dark while the view shows', async (t) => {
    const { page } = await open(1280, 'light')
    const frame = await mount(page, dailyOps, opsArgs, ops, contextFor('light', 1256))
    const background = () => frame.evaluate(() => getComputedStyle(document.body).backgroundColor)
    const light = await background()
    await page.evaluate(() => (window as unknown as { bridge: { setHostContext(c: unknown): void } }).bridge.setHostContext({ theme: 'dark', displayMode: 'inline' }))
    await frame.waitForFunction(() => document.documentElement.dataset.theme === 'dark')
    t.not(await background(), light, 'the view follows')
    t.same(await layoutProblems(page, frame), [], 'AA in dark too')
  })
})
