/** Entry module of the studio page: read the boot data the API embedded and start the app. */
import { StudioApp } from './app.js';
import { registerRedub } from './redub.js';
import { readBoot } from './shell.js';

registerRedub();
new StudioApp(readBoot(document)).start();
