// The Webhooks page in Chromium: the create form (URL and event checkboxes), the secret shown
// once, a test message delivered to a local receiver and listed in the delivery log, the
// failing warning, deleting after a page that asks first; desktop and phone widths (no sideways scrolling at 390 px), with screenshots
// in SHOTS_DIR when it is set.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { webhooks } from '../../db/schema.ts'
import { eq } from '../../db/orm.ts'
import { FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

t.test('the Webhooks page in a browser', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t, { config: { webhooks: { enabled: false, allowPrivateNetworks: true } } })
  const ws = await seedWorkspace(app)
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(204).end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const receiver = `http://127.0.0.1:${(server.address() as AddressInfo).port}/growthdesk`
  const browser = await launchChromium(t)
  const page = await newPage(browser)
  await signIn(page, url, ws.user.email, ws.user.password)
  const shots = process.env.SHOTS_DIR
  if (shots) fs.mkdirSync(shots, { recursive: true })

  await page.goto(`${url}/console/projects/${ws.project.slug}`)
  await clickAndWait(page, 'a:text-is("Webhooks")')
  t.equal(await page.locator('h1').innerText(), `Webhooks ${ws.project.slug}`)

  await page.fill('input[name=url]', receiver)
  await page.check('input[name=events][value="opportunity.submitted"]')
  await page.check('input[name=events][value="opportunity.reviewed"]')
  await page.fill('input[name=description]', 'CRM sync')
  await clickAndWait(page, 'button:text-is("Add webhook")')
  const secret = await page.locator('#new-webhook-secret').innerText()
  t.match(secret, /^whsec_/, 'the secret is shown once')
  const [row] = await app.repos.webhooks.list(ws.project.id)
  t.same(row!.events, ['opportunity.submitted', 'opportunity.reviewed'])
  if (shots) await page.screenshot({ path: path.join(shots, 'webhooks-created-1280.png'), fullPage: true })

  await clickAndWait(page, 'button:text-is("Send test")')
  t.equal(await app.webhooks.deliverDue(), 1)
  await page.reload()
  t.match(await page.locator('table.deliveries tbody').innerText(), /webhook\.test[\s\S]*succeeded[\s\S]*204/)
  t.equal(await page.locator('#new-webhook-secret').count(), 0, 'not shown again')

  // A second endpoint that keeps failing: the warning.
  const broken = await app.repos.webhooks.create({ workspaceId: ws.workspace.id, projectId: ws.project.id, url: 'https://hooks.example.com/broken', events: ['memory.added'], description: '', secret: 'whsec_c2VjcmV0', createdBy: ws.user.id, now: new Date() })
  await app.db.update(webhooks).set({ failing: true, consecutiveFailures: 7 }).where(eq(webhooks.id, broken.id))
  // A third, signing with v1 and v1a, that answered 410: disabled, with its reason and an Enable button.
  const gone = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: { authorization: `Bearer ${ws.keys.service}` }, payload: { project: ws.project.id, url: 'http://10.20.30.40/gone', events: ['alert.triggered'], signatures: ['v1', 'v1a'], format: 'slack', rate_limit: 10 } })
  const goneId = gone.json().id as string
  await app.db.update(webhooks).set({ enabled: false, disabledReason: 'The receiver answered 410 Gone on 2026-11-25T09:00:00.000Z: it asked for no more messages.' }).where(eq(webhooks.id, goneId))
  await page.goto(`${url}/console/projects/${ws.project.slug}/webhooks?webhook=${row!.id}`)
  t.match(await page.locator('.webhook-failing').innerText(), /keep failing \(7 attempts in a row\)/)
  t.match(await page.locator('.webhook-disabled').innerText(), /disabled: The receiver answered 410 Gone/)
  t.equal(await page.locator(`tr[data-webhook-id="${goneId}"] .public-key`).innerText(), gone.json().public_key)

  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    await page.setViewportSize({ width, height })
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    t.ok(overflow <= 0, `${width} px: no sideways scrolling (${overflow})`)
    if (shots) await page.screenshot({ path: path.join(shots, `webhooks-${width}.png`), fullPage: true })
  }
  await page.setViewportSize({ width: 1280, height: 800 })
  await clickAndWait(page, page.locator(`tr[data-webhook-id="${goneId}"] button:text-is("Enable")`))
  t.match(await page.locator('.flash').first().innerText(), /enabled again/)
  t.match(await app.repos.webhooks.find(goneId), { enabled: true, disabledReason: null })

  // Delete asks first and says what is dropped with the webhook.
  await page.setViewportSize({ width: 1280, height: 800 })
  await app.repos.webhooks.enqueueOne(broken.id, 'webhook.test', { data: {} }, new Date())
  await clickAndWait(page, page.locator(`tr[data-webhook-id="${broken.id}"] a:text-is("Delete")`))
  t.equal(await page.locator('h1').innerText(), 'Delete this webhook?')
  t.match(await page.locator('.undelivered').innerText(), /1 message has not been delivered yet/)
  t.ok(await app.repos.webhooks.find(broken.id), 'nothing deleted yet')
  if (shots) await page.screenshot({ path: path.join(shots, 'webhooks-delete-1280.png'), fullPage: true })
  await clickAndWait(page, 'button:text-is("Delete this webhook")')
  t.match(await page.locator('.flash').first().innerText(), /The webhook is deleted/)
  t.notOk(await app.repos.webhooks.find(broken.id), 'deleted once confirmed')
})
