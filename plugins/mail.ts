// Outgoing e-mail, optional: with SMTP_URL and MAIL_FROM set, invitations and password-reset
// links are sent by mail through nodemailer (the Node mailer everyone uses: maintained since
// 2010, dependency-free, ~8 M weekly downloads, types included, SMTP with STARTTLS, pooling and
// timeouts). Unset, `app.mail.enabled` is false, nothing is sent, and the pages and tools that
// make such a link show it to whoever made it.
//
// A message is sent while the request that made it waits (an invitation's page says whether it
// went), within SEND_DEADLINE_MS: a slow or unreachable mail server delays the answer, it does
// not hold it. A failure is the caller's to report (`send` throws MailError); nothing is queued.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createTransport } from 'nodemailer'
import type { MailConfig } from '../config.ts'
import { disabledMailer, MailError, type Mailer, type MailMessage } from '../core/mail.ts'

export { MailError, type Mailer, type MailMessage } from '../core/mail.ts'

declare module 'fastify' {
  interface FastifyInstance {
    mail: Mailer
  }
}

/** The longest a message may take to send, connecting included. */
export const SEND_DEADLINE_MS = 15_000

/** An SMTP URL as it may be shown: without its password. */
export function redactSmtpUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'an SMTP URL'
  }
}

async function mailPlugin(app: FastifyInstance, options: { mail?: MailConfig | undefined }) {
  const config = options.mail
  if (!config) {
    app.decorate('mail', disabledMailer)
    return
  }
  // nodemailer's own timeouts bound each step; the signal below bounds the whole.
  const transport = createTransport(
    { url: config.url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: SEND_DEADLINE_MS },
    { from: config.from }
  )
  const server = redactSmtpUrl(config.url)
  app.decorate('mail', {
    enabled: true,
    async send(message: MailMessage) {
      const signal = AbortSignal.timeout(SEND_DEADLINE_MS)
      try {
        const info = await transport.sendMail({ to: message.to, subject: message.subject, text: message.text, signal })
        // Never the message: it carries a link that works.
        app.log.info({ to: message.to, subject: message.subject, messageId: info.messageId }, 'mail sent')
      } catch (err) {
        app.log.warn({ err, to: message.to, server }, 'mail could not be sent')
        throw new MailError(`The mail to ${message.to} could not be sent (${(err as Error).message}).`)
      }
    },
  } satisfies Mailer)
  app.addHook('onClose', async () => transport.close())
}

export default fp(mailPlugin, { name: 'mail' })
