// The Alerts page in Chromium: reached from the project's page, an alert added with the form, a
// refusal shown as a message that changes nothing, the alert firing after an ingestion (state and
// the log of firings), paused and deleted; a viewer sees the alerts without the owner's controls;
// desktop and phone widths (no sideways scrolling at 390 px), screenshots in SHOTS_DIR when set.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { addMember, ingestEvents, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

t.test('the Alerts page in a browser', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const browser = await launchChromium(t)
  const page = await newPage(browser)
  await signIn(page, url, ws.user.email, ws.user.password)
  const shots = process.env.SHOTS_DIR
  if (shots) fs.mkdirSync(shots, { recursive: true })

  await page.goto(`${url}/console/projects/${ws.project.slug}`)
  await clickAndWait(page, 'a:text-is("Alerts")')
  t.equal(await page.locator('h1').innerText(), `Alerts ${ws.project.slug}`)
  t.match(await page.locator('table.alerts tbody').innerText(), /No alerts yet/)

  // A refusal: anomaly with a threshold. Nothing is created.
  await page.fill('input[name=name]', 'Odd days')
  await page.selectOption('select[name=metric]', 'daily_users')
  await page.selectOption('select[name=condition]', 'anomaly')
  await page.fill('input[name=threshold]', '4')
  await clickAndWait(page, 'button:text-is("Add alert")')
  t.match(await page.locator('.flash.error').innerText(), /threshold is not taken by an anomaly alert/)
  t.same(await app.repos.alerts.list(ws.project.id), [])

  await page.fill('input[name=name]', 'Daily users below 3')
  await page.selectOption('select[name=metric]', 'daily_users')
  await page.selectOption('select[name=condition]', 'below')
  await page.fill('input[name=threshold]', '3')
  await clickAndWait(page, 'button:text-is("Add alert")')
  t.match(await page.locator('.flash.ok').innerText(), /“Daily users below 3” is set/)
  t.match(await page.locator('table.alerts tbody').innerText(), /Daily users below 3[\s\S]*below 3[\s\S]*not evaluated yet/)

  await page.fill('input[name=name]', 'Export rush')
  await page.selectOption('select[name=metric]', 'event_count')
  await page.fill('input[name=event]', 'export')
  await page.selectOption('select[name=condition]', 'above')
  await page.fill('input[name=threshold]', '20')
  await clickAndWait(page, 'button:text-is("Add alert")')

  // Yesterday had one user, today so far two: the below-alert fires.
  const yesterday = new Date(Date.now() - 86_400_000).toISOString()
  await ingestEvents(app, ws.keys.ingest, [['daily_use', 'a@example.com', yesterday], ['daily_use', 'b@example.com', new Date().toISOString()]])
  await app.alerts.settled()
  await page.reload()
  const [below] = await app.repos.alerts.list(ws.project.id)
  t.match(await page.locator(`tr[data-alert-id="${below!.id}"] .alert-state`).innerText(), /firing/)
  t.match(await page.locator('table.alert-events tbody').innerText(), /Daily users below 3[\s\S]*triggered[\s\S]*threshold 3/)

  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    await page.setViewportSize({ width, height })
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    t.ok(overflow <= 0, `${width} px: no sideways scrolling (${overflow})`)
    if (shots) await page.screenshot({ path: path.join(shots, `alerts-${width}.png`), fullPage: true })
  }
  await page.setViewportSize({ width: 1280, height: 800 })

  await clickAndWait(page, page.locator(`tr[data-alert-id="${below!.id}"] button:text-is("Pause")`))
  t.match(await page.locator('.flash.ok').innerText(), /is paused/)
  t.match(await page.locator(`tr[data-alert-id="${below!.id}"] .alert-state`).innerText(), /paused/)
  await clickAndWait(page, page.locator(`tr[data-alert-id="${below!.id}"] button:text-is("Delete")`))
  t.match(await page.locator('.flash.ok').innerText(), /deleted/)
  t.equal((await app.repos.alerts.list(ws.project.id)).length, 1)

  // A viewer reads them, with no controls and no form.
  const viewer = await addMember(app, ws.project.id, 'viewer')
  const other = await newPage(browser)
  await signIn(other, url, viewer.user.email, viewer.user.password)
  await other.goto(`${url}/console/projects/${ws.project.slug}/alerts`)
  t.match(await other.locator('table.alerts tbody').innerText(), /Export rush/)
  t.equal(await other.locator('button:text-is("Delete")').count(), 0)
  t.equal(await other.locator('form[action$="/alerts"]').count(), 0)
})
