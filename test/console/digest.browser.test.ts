// The Digest page in Chromium: reached from the project page, the schedule form (owner), the
// preview with the numbers of seeded events, opportunities and an alert; desktop and phone
// widths without sideways scrolling, with screenshots in SHOTS_DIR when it is set.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { sql } from '../../db/orm.ts'
import { fixedClock, ingestEvents, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

t.test('the Digest page in a browser', { skip }, async (t) => {
  const clock = fixedClock('2026-11-20T12:00:00.000Z')
  const { app, url } = await listenTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const events: [string, string, string][] = []
  for (const [day, signups, users] of [['2026-11-19', 4, 9], ['2026-11-18', 3, 7]] as const) {
    for (let i = 0; i < signups; i++) events.push(['signup', `u${day}${i}`, `${day}T09:0${i}:00Z`])
    for (let i = 0; i < users; i++) events.push(['daily_use', `u${i}`, `${day}T10:0${i}:00Z`], ['page_view', `u${i}`, `${day}T10:0${i}:30Z`])
  }
  events.push(['export_csv', 'u1', '2026-11-19T11:00:00Z'], ['invite_sent', 'u2', '2026-11-18T11:00:00Z'])
  await ingestEvents(app, ws.keys.ingest, events)
  for (const [text, at] of [['A CTO of a 40-person fintech asked for SSO before buying the team plan', '2026-11-19T10:00:00Z'], ['A reseller in Lyon wants a partner discount for agencies', '2026-11-19T15:00:00Z']]) {
    await app.repos.opportunities.submit({ projectId: project, submittedBy: ws.user.id, contributionType: 'potential_user_opportunity', keyInformation: text!, reason: 'r', suggestedAction: 's', receivedAt: new Date(at!) })
  }
  await app.db.execute(sql`insert into alerts (id, project_id, name, metric, condition, threshold) values ('alr_signups', ${project}, 'Signups below 5', 'registrations', 'below', 5)`)
  await app.db.execute(sql`insert into alert_events (id, alert_id, project_id, kind, day, value, at) values ('ale_b1', 'alr_signups', ${project}, 'triggered', '2026-11-19', 4, '2026-11-20T00:05:00Z')`)

  const browser = await launchChromium(t)
  const page = await newPage(browser)
  await signIn(page, url, ws.user.email, ws.user.password)
  const shots = process.env.SHOTS_DIR
  if (shots) fs.mkdirSync(shots, { recursive: true })

  await page.goto(`${url}/console/projects/${ws.project.slug}`)
  await clickAndWait(page, 'a:text-is("Digest")')
  t.match(await page.locator('h1').innerText(), /^Digest/)
  t.equal(await page.locator('[data-field=summary]').innerText(), 'No digest is scheduled.')

  await page.selectOption('select[name=frequency]', 'weekly')
  await page.selectOption('select[name=hour]', '8')
  await page.selectOption('select[name=weekday]', '1')
  await clickAndWait(page, 'button:text-is("Schedule the digest")')
  t.match(await page.locator('.flash').first().innerText(), /The digest schedule is saved/)
  t.equal(await page.locator('[data-field=summary]').innerText(), 'Every Monday at 08:00')
  t.match(await app.repos.digests.find(project), { frequency: 'weekly', hour: 8, weekday: 1, enabled: true })

  await clickAndWait(page, 'a:text-is("Daily")')
  t.equal(await page.locator('[data-kpi=registrations] [data-field=value]').innerText(), '4')
  t.equal(await page.locator('[data-kpi=registrations] [data-field=previous]').innerText(), '3')
  t.equal(await page.locator('[data-kpi=daily_users] [data-field=change]').innerText(), '▲ 28.6 %')
  t.equal(await page.locator('[data-kpi=opportunities] [data-field=new]').innerText(), '2')
  t.match(await page.locator('table[data-digest=alerts]').innerText(), /2026-11-19\s+Signups below 5\s+triggered\s+4/)
  t.equal(await page.locator('table[data-digest=events] tbody tr').count(), 4)

  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    await page.setViewportSize({ width, height })
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    t.ok(overflow <= 0, `${width} px: no sideways scrolling (${overflow})`)
    if (shots) await page.screenshot({ path: path.join(shots, `digest-${width}.png`), fullPage: true })
  }
})
