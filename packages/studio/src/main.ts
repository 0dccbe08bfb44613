/** Entry module of the studio page: read the boot data the API embedded and start the app. */
import { StudioApp } from './app.js';
import { readBoot } from './shell.js';

new StudioApp(readBoot(document)).start();
