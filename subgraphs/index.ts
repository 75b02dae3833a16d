import type { Kernel } from '../kernel/platform';
import type { ServiceModule } from '../kernel/subgraph';
import { controlPlane } from './control-plane';
import { engine } from './engine';
import { feedback } from './feedback';
import { infra } from './infra';
import { links } from './links';
import { promptlib } from './promptlib';

/** Every business service of the platform, in composition order. */
export const services: ServiceModule<Kernel>[] = [controlPlane, promptlib, engine, links, feedback, infra];
