// What an operation may send by mail: the mailer's contract (plugins/mail.ts implements it with
// SMTP; without SMTP_URL it is disabled) and the error a refused or unreachable server is.
export interface MailMessage {
  to: string
  subject: string
  /** Plain text: every message is readable as it is, in any client. */
  text: string
}

export interface Mailer {
  /** Whether messages are sent at all (SMTP_URL is set). */
  readonly enabled: boolean
  /** Sends one message; throws MailError when the server refuses it or cannot be reached in time. */
  send(message: MailMessage): Promise<void>
}

export class MailError extends Error {
  override name = 'MailError'
}

/** A mailer that sends nothing (no SMTP_URL): `enabled` is false and `send` throws. */
export const disabledMailer: Mailer = {
  enabled: false,
  async send() {
    throw new MailError('Mail is not configured (SMTP_URL and MAIL_FROM).')
  },
}
