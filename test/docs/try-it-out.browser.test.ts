// /docs in Chromium: a reviewer authorizes with their key, opens the documented call of
// review_opportunity, uses "Try it out" with a body of their own, and the change lands.
import t from 'tap'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { FILE_TIMEOUT, browserSkip, launchChromium, newPage } from '../console/helpers.ts'

t.setTimeout(FILE_TIMEOUT)
/** The first render of /docs (see below). */
const RENDER_TIMEOUT = 240_000
const skip = browserSkip(t)

t.test('"Try it out" on /docs calls review_opportunity', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const submitted = await app.inject({
    method: 'POST',
    url: `/api/v1/mcp/projects/${ws.project.id}/opportunities`,
    headers: bearer(ws.keys.mcp),
    payload: { contribution_type: 'potential_user_opportunity', key_information: 'Asked for a demo', reason: 'r', suggested_action: 's' },
  })
  const eventId = (submitted.json() as { event_id: string }).event_id

  const browser = await launchChromium(t)
  const page = await newPage(browser)
  await page.goto(`${url}/docs`)
  // Swagger UI renders the whole OpenAPI document (~490 kB) before it shows a button: 20 s of
  // Chromium's CPU on a loaded 2-core machine, past the 30 s action timeout when it is busier.
  await page.getByRole('button', { name: /Authorize/ }).first().click({ timeout: RENDER_TIMEOUT })
  await page.locator('#auth-bearer-value').fill(ws.keys.service)
  await page.locator('.modal-ux button.authorize').click()
  await page.locator('.modal-ux button.btn-done').click()

  const operation = page.locator('#operations-tools-call_review_opportunity')
  await operation.locator('.opblock-summary').click()
  await operation.getByRole('button', { name: 'Try it out' }).click()
  const body = JSON.stringify({ project: ws.project.id, event_id: eventId, status: 'contacted', note: 'From the docs page' })
  await operation.locator('textarea.body-param__text').fill(body)
  await operation.getByRole('button', { name: 'Execute' }).click()
  const status = operation.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor()
  t.equal((await status.innerText()).trim(), '200', 'the call answered 200')

  const listed = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities?status=contacted`, headers: bearer(ws.keys.mcp) })
  const items = (listed.json() as { items: { event_id: string; review_note: string }[] }).items
  t.same(items.map((i) => [i.event_id, i.review_note]), [[eventId, 'From the docs page']], 'the review landed')
})
