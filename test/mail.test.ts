// Outgoing mail (plugins/mail.ts): off unless SMTP_URL and MAIL_FROM are set; on, a message goes
// over SMTP (with the URL's user and password) to a real server started here, and a refusal or
// an unreachable server is a MailError the caller reports.
import t from 'tap'
import net from 'node:net'
import { ConfigError, loadConfig } from '../config.ts'
import { MailError, redactSmtpUrl } from '../plugins/mail.ts'
import { buildTestApp } from './helpers/app.ts'
import { startMailServer } from './helpers/mail.ts'

t.test('SMTP_URL and MAIL_FROM: both or neither; the URL, which holds a password, is never echoed', async (t) => {
  t.equal(loadConfig({}).mail, undefined, 'unset: no mail')
  t.same(loadConfig({ SMTP_URL: 'smtp://u:p@mail.example.com:587', MAIL_FROM: 'growthdesk <gd@example.com>' }).mail, {
    url: 'smtp://u:p@mail.example.com:587',
    from: 'growthdesk <gd@example.com>',
  })
  t.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com' }), { name: 'ConfigError', variable: 'MAIL_FROM' })
  try {
    loadConfig({ SMTP_URL: 'http://user:hunter2@mail.example.com', MAIL_FROM: 'a@b.c' })
    t.fail('an http URL is not an SMTP URL')
  } catch (err) {
    t.ok(err instanceof ConfigError && err.variable === 'SMTP_URL')
    t.notMatch((err as Error).message, /hunter2/, 'the password is not in the message')
  }
  t.throws(() => loadConfig({ SMTP_URL: 'smtp://m.example.com', MAIL_FROM: 'no-at-sign' }), { name: 'ConfigError', variable: 'MAIL_FROM' })
  t.throws(() => loadConfig({ SMTP_URL: 'smtp://m.example.com', MAIL_FROM: 'a@b.c\r\nBcc: x@y.z' }), { name: 'ConfigError', variable: 'MAIL_FROM' }, 'no header injection through MAIL_FROM')
  t.equal(redactSmtpUrl('smtp://user:hunter2@mail.example.com:587'), 'smtp://user:***@mail.example.com:587')
})

t.test('without SMTP_URL nothing is sent', async (t) => {
  const app = await buildTestApp(t)
  t.equal(app.mail.enabled, false)
  await t.rejects(app.mail.send({ to: 'a@example.com', subject: 's', text: 't' }), MailError)
})

t.test('with SMTP_URL a message arrives over SMTP, authenticated, from MAIL_FROM', async (t) => {
  const mailbox = await startMailServer()
  t.teardown(() => mailbox.close())
  const app = await buildTestApp(t, { config: { mail: { url: mailbox.url, from: 'growthdesk <growthdesk@example.test>' } } })
  t.equal(app.mail.enabled, true)
  await app.mail.send({ to: 'new@example.com', subject: 'You are invited', text: 'Open http://127.0.0.1/console/invite/abc to join.' })
  const mail = await mailbox.next()
  t.equal(mail.subject, 'You are invited')
  t.equal(mail.from?.value[0]?.address, 'growthdesk@example.test')
  t.equal((Array.isArray(mail.to) ? mail.to[0] : mail.to)?.value[0]?.address, 'new@example.com')
  t.equal(mailbox.linkIn(mail), 'http://127.0.0.1/console/invite/abc')

  mailbox.refuse(/refused@/)
  await t.rejects(app.mail.send({ to: 'refused@example.com', subject: 's', text: 't' }), MailError, 'a refused recipient is a MailError')
})

t.test('a wrong password, or no server at all, is a MailError, not a hang', async (t) => {
  const mailbox = await startMailServer()
  t.teardown(() => mailbox.close())
  const wrong = await buildTestApp(t, { config: { mail: { url: mailbox.url.replace('mail-secret', 'nope'), from: 'a@b.test' } } })
  await t.rejects(wrong.mail.send({ to: 'x@example.com', subject: 's', text: 't' }), MailError)
  t.equal(mailbox.messages.length, 0)

  // A port nobody listens on: take one, then close it.
  const port = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
  const none = await buildTestApp(t, { config: { mail: { url: `smtp://127.0.0.1:${port}`, from: 'a@b.test' } } })
  await t.rejects(none.mail.send({ to: 'x@example.com', subject: 's', text: 't' }), MailError)
})
