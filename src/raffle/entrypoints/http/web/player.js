// The player page: log in, choose an activity, draw. (Filled in by the player page work.)
import { notify } from "/web/api.js";

notify("Welcome", "info");
