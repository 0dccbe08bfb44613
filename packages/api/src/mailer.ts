/** E-mail notifications through nodemailer (DUB_SMTP_URL, e.g. smtp://user:pass@host:587). */
import nodemailer from 'nodemailer';

export interface Mailer {
  send(to: string, subject: string, text: string): Promise<void>;
  close(): void;
}

export function createSmtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    async send(to, subject, text) {
      await transport.sendMail({ from, to, subject, text });
    },
    close: () => transport.close(),
  };
}
