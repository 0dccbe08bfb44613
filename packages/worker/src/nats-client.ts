/**
 * What the JetStream job queue and event feed share: a connection (theirs to close when they
 * opened it), the resolved topology with its streams ensured on open, and whether the connection
 * is up now.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { silentLogger, type Logger } from '@dub/core';
import { closeNats, connectNats, type CloseOutcome } from './nats-connection.js';
import { ensureStreams, resolveTopology, type ResolvedTopology, type TopologyOptions } from './nats-topology.js';

export interface StreamsClientOptions extends TopologyOptions {
  /** Create/update streams and consumers on open. Default true. */
  ensure?: boolean;
  logger?: Logger;
}

/** A connection, the topology over it, and whether the client opened the connection (and closes it). */
export interface StreamsLink {
  nc: NatsConnection;
  topology: ResolvedTopology;
  ownsConnection: boolean;
}

/** The topology of `o` over an existing connection, its streams ensured unless `o.ensure` is false. */
export async function linkOver(nc: NatsConnection, o: StreamsClientOptions, ownsConnection = false): Promise<StreamsLink> {
  const topology = resolveTopology(o);
  if (o.ensure ?? true) await ensureStreams(await jetstreamManager(nc), topology);
  return { nc, topology, ownsConnection };
}

/** A new connection (named `name`) with the topology of `o`; the connection is closed again if that fails. */
export async function linkNew(servers: string | string[], name: string, o: StreamsClientOptions): Promise<StreamsLink> {
  const nc = await connectNats(servers, { name, logger: o.logger ?? silentLogger });
  try {
    return await linkOver(nc, o, true);
  } catch (e) {
    await closeNats(nc, 0);
    throw e;
  }
}

export abstract class StreamsClient {
  readonly nc: NatsConnection;
  readonly topology: ResolvedTopology;
  private readonly ownsConnection: boolean;
  private up = true;
  /** How `close()` ended the connection (when this client opened it). */
  closed: CloseOutcome | undefined;

  protected constructor(link: StreamsLink) {
    this.nc = link.nc;
    this.topology = link.topology;
    this.ownsConnection = link.ownsConnection;
    void (async () => {
      for await (const st of link.nc.status()) {
        if (st.type === 'disconnect') this.up = false;
        else if (st.type === 'reconnect') {
          this.up = true;
          this.reconnected();
        }
      }
    })().catch(() => undefined);
  }

  /** Called when the connection is back after a disconnect. */
  protected reconnected(): void {}

  /** Whether the connection is up (false from a disconnect until the reconnect). */
  get connected(): boolean {
    return this.up && !this.nc.isClosed();
  }

  /** Drain the connection when this client opened it (closed without the drain when NATS does not answer). */
  protected async closeConnection(): Promise<void> {
    if (this.ownsConnection) this.closed = await closeNats(this.nc);
  }
}
