// The operator console (admin role). (Filled in by the console work.)
import { notify } from "/web/api.js";

notify("Operator console", "info");
