import { Agent, request } from 'undici';
import {
  toTransportError,
  TransportError,
  type StreamingTransportResponse,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from '../transport';

export interface UndiciTransportOptions {
  /** Keep-alive connections per origin. */
  connections?: number;
}

function lowerCaseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

/** The default transport for the Slack app, emulator, demo and benchmarks: a keep-alive undici pool. */
export class UndiciTransport implements Transport {
  private readonly dispatcher: Agent;

  constructor(options: UndiciTransportOptions = {}) {
    this.dispatcher = new Agent({ connections: options.connections ?? 64, keepAliveTimeout: 10_000, pipelining: 1 });
  }

  private async open(req: TransportRequest) {
    const timeout = AbortSignal.timeout(req.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    try {
      const response = await request(req.url, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        signal,
        dispatcher: this.dispatcher,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      });
      return { response, signal, timeout };
    } catch (error) {
      throw this.mapError(error, req, timeout);
    }
  }

  private mapError(error: unknown, req: TransportRequest, timeout: AbortSignal): TransportError {
    if (timeout.aborted && !req.signal?.aborted) {
      return new TransportError('timeout', `No complete reply within ${req.timeoutMs} ms.`, {
        mayHaveReachedServer: true,
        cause: error,
      });
    }
    return toTransportError(error, req.signal);
  }

  async send(req: TransportRequest): Promise<TransportResponse> {
    const { response, timeout } = await this.open(req);
    try {
      const body = await response.body.text();
      return { status: response.statusCode, headers: lowerCaseHeaders(response.headers), body };
    } catch (error) {
      throw this.mapError(error, req, timeout);
    }
  }

  async stream(req: TransportRequest): Promise<StreamingTransportResponse> {
    const { response, timeout } = await this.open(req);
    const mapError = (error: unknown) => this.mapError(error, req, timeout);
    async function* chunks(): AsyncIterable<Uint8Array> {
      try {
        for await (const chunk of response.body) yield chunk as Uint8Array;
      } catch (error) {
        throw mapError(error);
      }
    }
    return { status: response.statusCode, headers: lowerCaseHeaders(response.headers), body: chunks() };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
