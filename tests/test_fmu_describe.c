/* SPDX-License-Identifier: MIT */
/* fmu_describe_text / fmu_describe_file (backends/fmu/fmu_describe.c): a
 * full FMI 3.0 description (Model Exchange and Co-Simulation, an
 * experiment, a variable of each kind, the model structure) read field by
 * field, and each refused description refused with a message that names
 * the line and the cause. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/fmu/fmu.h"
#include "tessera/tessera.h"
#include "temp_dir.h"

static const char full[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"                                    /* 1 */
    "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"bouncer\"\n"                  /* 2 */
    "  instantiationToken=\"{8c4e810f}\" description=\"a ball\" generationTool=\"t\">\n" /* 3 */
    "  <ModelExchange modelIdentifier=\"bouncer\" providesDirectionalDerivatives=\"true\"\n"
    "    needsCompletedIntegratorStep=\"1\" canGetAndSetFMUState=\"true\"/>\n"          /* 5 */
    "  <CoSimulation modelIdentifier=\"bouncer_cs\" canHandleVariableCommunicationStepSize=\"true\"\n"
    "    fixedInternalStepSize=\"0.001\" hasEventMode=\"false\" providesAdjointDerivatives=\"1\"/>\n"
    "  <UnitDefinitions><Unit name=\"m\"/></UnitDefinitions>\n"                        /* 8 */
    "  <DefaultExperiment startTime=\"0\" stopTime=\"3.5\" tolerance=\"1e-6\" stepSize=\"0.01\"/>\n"
    "  <ModelVariables>\n"                                                             /* 10 */
    "    <Float64 name=\"time\" valueReference=\"0\" causality=\"independent\"/>\n"     /* 11 */
    "    <Float64 name=\"h\" valueReference=\"1\" causality=\"output\" start=\"1.5\"/>\n"
    "    <Float64 name=\"der(h)\" valueReference=\"2\" derivative=\"1\"/>\n"           /* 13 */
    "    <Float32 name=\"g\" valueReference=\"3\" causality=\"parameter\" variability=\"fixed\" "
    "start=\"-9.81\" description=\"gravity\"/>\n"                                      /* 14 */
    "    <Int8 name=\"i8\" valueReference=\"4\" start=\"-128\"/>\n"
    "    <UInt8 name=\"u8\" valueReference=\"5\" start=\"255\"/>\n"
    "    <Int16 name=\"i16\" valueReference=\"6\" start=\"-3\"/>\n"
    "    <UInt16 name=\"u16\" valueReference=\"7\" start=\"65535\"/>\n"
    "    <Int32 name=\"i32\" valueReference=\"8\" causality=\"input\" start=\"42\"/>\n"
    "    <UInt32 name=\"u32\" valueReference=\"9\" start=\"4294967295\"/>\n"              /* 20 */
    "    <Int64 name=\"i64\" valueReference=\"10\" start=\"-7\"/>\n"
    "    <UInt64 name=\"u64\" valueReference=\"11\" start=\"7\"/>\n"
    "    <Boolean name=\"on\" valueReference=\"12\" causality=\"input\" start=\"true\"/>\n"
    "    <String name=\"label\" valueReference=\"13\"><Start value=\"x\"/></String>\n"
    "    <Binary name=\"blob\" valueReference=\"14\"/>\n"                                /* 25 */
    "    <Clock name=\"tick\" valueReference=\"15\" causality=\"input\"/>\n"
    "    <Enumeration name=\"mode\" valueReference=\"16\" declaredType=\"M\" start=\"2\"/>\n"
    "    <Float64 name=\"v\" valueReference=\"17\" start=\"1 2 3\">\n"
    "      <Dimension start=\"3\"/>\n"
    "    </Float64>\n"                                                                 /* 30 */
    "  </ModelVariables>\n"
    "  <ModelStructure>\n"
    "    <Output valueReference=\"1\"/>\n"
    "    <Output valueReference=\"8\" dependencies=\"1\"/>\n"
    "    <ContinuousStateDerivative valueReference=\"2\"/>\n"                          /* 35 */
    "    <InitialUnknown valueReference=\"2\"/>\n"
    "    <EventIndicator valueReference=\"1\"/>\n"
    "  </ModelStructure>\n"
    "</fmiModelDescription>\n";

Test(fmu_describe, a_full_description_is_read_field_by_field) {
    fmu_description d;
    char why[512] = "";
    int rc = fmu_describe_text(full, strlen(full), "modelDescription.xml", &d, why, sizeof why);
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_str_eq(d.fmi_version, "3.0");
    cr_assert_str_eq(d.model_name, "bouncer");
    cr_assert_str_eq(d.instantiation_token, "{8c4e810f}");
    cr_assert_str_eq(d.description, "a ball");
    cr_assert_str_eq(d.generation_tool, "t");

    cr_assert(d.me.present && d.cs.present);
    cr_assert_str_eq(d.me.model_identifier, "bouncer");
    cr_assert_eq(d.me.provides_directional_derivatives, 1);
    cr_assert_eq(d.me.provides_adjoint_derivatives, 0);
    cr_assert_eq(d.me.needs_completed_integrator_step, 1);
    cr_assert_eq(d.me.can_get_and_set_fmu_state, 1);
    cr_assert_eq(d.me.can_serialize_fmu_state, 0);
    cr_assert_str_eq(d.cs.model_identifier, "bouncer_cs");
    cr_assert_eq(d.cs.can_handle_variable_communication_step_size, 1);
    cr_assert_eq(d.cs.has_event_mode, 0);
    cr_assert_eq(d.cs.provides_adjoint_derivatives, 1);
    cr_assert_eq(d.cs.fixed_internal_step_size, 0.001);

    cr_assert(d.has_start_time && d.has_stop_time && d.has_tolerance && d.has_step_size);
    cr_assert_eq(d.start_time, 0.0);
    cr_assert_eq(d.stop_time, 3.5);
    cr_assert_eq(d.tolerance, 1e-6);
    cr_assert_eq(d.step_size, 0.01);

    cr_assert_eq(d.n_vars, 18);
    static const fmu_type types[] = {FMU_FLOAT64, FMU_FLOAT64, FMU_FLOAT64, FMU_FLOAT32, FMU_INT8,
                                     FMU_UINT8,   FMU_INT16,   FMU_UINT16,  FMU_INT32,   FMU_UINT32,
                                     FMU_INT64,   FMU_UINT64,  FMU_BOOLEAN, FMU_STRING,  FMU_BINARY,
                                     FMU_CLOCK,   FMU_ENUMERATION, FMU_FLOAT64};
    static const double starts[] = {0, 1.5, 0, -9.81, -128, 255, -3, 65535, 42, 4294967295.0,
                                    -7, 7, 1, 0, 0, 0, 2, 1};
    static const int has_start[] = {0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1};
    for (int32_t i = 0; i < d.n_vars; i++) {
        const fmu_variable *v = &d.vars[i];
        cr_assert_eq(v->vr, (uint32_t)i, "%s", v->name);
        cr_assert_eq(v->type, types[i], "%s: %s", v->name, fmu_type_name(v->type));
        cr_assert_eq(v->has_start, has_start[i], "%s", v->name);
        if (has_start[i])
            cr_assert_eq(v->start, starts[i], "%s: %g", v->name, v->start);
        cr_assert_eq(v->line, 11 + i, "%s on line %d", v->name, v->line);
        cr_assert_eq(fmu_find_variable(&d, v->name), i);
    }
    cr_assert_float_eq(d.vars[3].start, -9.81, 1e-12);
    cr_assert_eq(fmu_find_variable(&d, "nope"), -1);
    cr_assert_eq(d.vars[0].causality, FMU_INDEPENDENT);
    cr_assert_eq(d.vars[1].causality, FMU_OUTPUT);
    cr_assert_eq(d.vars[2].causality, FMU_LOCAL, "the default");
    cr_assert_eq(d.vars[2].variability, FMU_CONTINUOUS, "Float's default");
    cr_assert_eq(d.vars[3].causality, FMU_PARAMETER);
    cr_assert_eq(d.vars[3].variability, FMU_FIXED);
    cr_assert_str_eq(d.vars[3].description, "gravity");
    cr_assert_null(d.vars[2].description);
    cr_assert_eq(d.vars[8].variability, FMU_DISCRETE, "Int32's default");
    cr_assert_eq(d.vars[8].causality, FMU_INPUT);
    cr_assert_eq(d.vars[2].derivative_of, 1, "der(h) is h's derivative");
    cr_assert_eq(d.vars[1].derivative_of, -1);
    cr_assert_eq(d.vars[17].is_array, 1);
    cr_assert_eq(d.vars[1].is_array, 0);
    cr_assert_eq(d.n_clocks, 1);

    cr_assert_eq(d.n_outputs, 2);
    cr_assert_eq(d.outputs[0], 1);
    cr_assert_eq(d.outputs[1], 8);
    cr_assert_eq(d.n_derivatives, 1);
    cr_assert_eq(d.derivatives[0], 2);
    cr_assert_eq(d.n_event_indicators, 1);

    fmu_description_free(&d);
    cr_assert_null(d.vars);
    cr_assert_eq(d.n_vars, 0);
    fmu_description_free(&d); /* a zeroed struct is fine */
}

Test(fmu_describe, defaults_apply_when_attributes_are_absent) {
    static const char xml[] =
        "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"m\" instantiationToken=\"t\">"
        "<ModelExchange modelIdentifier=\"m\"/>"
        "<ModelVariables><Float32 name=\"x\" valueReference=\"0\"/>"
        "<Boolean name=\"b\" valueReference=\"1\" start=\"0\"/></ModelVariables>"
        "</fmiModelDescription>";
    fmu_description d;
    char why[512] = "";
    cr_assert_eq(fmu_describe_text(xml, strlen(xml), "md", &d, why, sizeof why), 0, "%s", why);
    cr_assert_eq(d.me.needs_completed_integrator_step, 0, "FMI 3.0's default is false");
    cr_assert_eq(d.cs.present, 0);
    cr_assert_null(d.description);
    cr_assert_null(d.generation_tool);
    cr_assert(!d.has_start_time && !d.has_stop_time && !d.has_tolerance && !d.has_step_size);
    cr_assert_eq(d.vars[0].variability, FMU_CONTINUOUS);
    cr_assert_eq(d.vars[0].causality, FMU_LOCAL);
    cr_assert_eq(d.vars[0].has_start, 0);
    cr_assert_eq(d.vars[1].variability, FMU_DISCRETE);
    cr_assert_eq(d.vars[1].has_start, 1);
    cr_assert_eq(d.vars[1].start, 0.0);
    cr_assert_eq(d.n_outputs, 0);
    fmu_description_free(&d);
}

Test(fmu_describe, the_names_of_types_causalities_and_variabilities) {
    cr_assert_str_eq(fmu_type_name(FMU_FLOAT64), "Float64");
    cr_assert_str_eq(fmu_type_name(FMU_ENUMERATION), "Enumeration");
    cr_assert_str_eq(fmu_causality_name(FMU_PARAMETER), "parameter");
    cr_assert_str_eq(fmu_causality_name(FMU_CALCULATED_PARAMETER), "calculatedParameter");
    cr_assert_str_eq(fmu_causality_name(FMU_STRUCTURAL_PARAMETER), "structuralParameter");
    cr_assert_str_eq(fmu_variability_name(FMU_CONTINUOUS), "continuous");
    cr_assert_str_eq(fmu_variability_name(FMU_CONSTANT), "constant");
}

/* The description (root attributes given, the body after them) is
 * refused with TSR_E_LOAD and a message holding "line <line>" and cause;
 * the struct is left zeroed. */
static void expect_refused_text(const char *xml, int line, const char *cause) {
    fmu_description d;
    char why[512] = "";
    int rc = fmu_describe_text(xml, strlen(xml), "modelDescription.xml", &d, why, sizeof why);
    cr_assert_eq(rc, TSR_E_LOAD, "rc %d for: %s", rc, why);
    char at[64];
    snprintf(at, sizeof at, "modelDescription.xml line %d: ", line);
    cr_assert(strstr(why, at), "'%s' in: %s", at, why);
    cr_assert(strstr(why, cause), "'%s' in: %s", cause, why);
    cr_assert_null(d.vars);
    cr_assert_null(d.fmi_version);
}

#define HEAD                                                                                      \
    "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"m\" instantiationToken=\"t\">\n"         \
    "<CoSimulation modelIdentifier=\"m\"/>\n"
#define TAIL "</fmiModelDescription>\n"

Test(fmu_describe, an_fmi2_description_is_refused_as_such) {
    expect_refused_text("<?xml version=\"1.0\"?>\n<fmiModelDescription fmiVersion=\"2.0\" "
                        "modelName=\"m\" guid=\"g\"><CoSimulation modelIdentifier=\"m\"/>" TAIL,
                        2, "fmiVersion \"2.0\": FMI 2.0 FMUs are not supported: Tessera loads FMI 3.0");
    expect_refused_text("<fmiModelDescription fmiVersion=\"1.0\"/>", 1,
                        "FMI 1.0 FMUs are not supported");
    expect_refused_text("<fmiModelDescription fmiVersion=\"4.0\"/>", 1, "is not 3.x");
}

Test(fmu_describe, a_doctype_or_entity_is_refused_before_any_expansion) {
    expect_refused_text("<?xml version=\"1.0\"?>\n<!DOCTYPE fmiModelDescription>\n" HEAD TAIL, 2,
                        "a DOCTYPE is not allowed");
    /* the billion laughs: stopped at its DOCTYPE, no entity expanded */
    expect_refused_text("<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n"
                        "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>\n"
                        "<fmiModelDescription fmiVersion=\"&lol2;\"/>",
                        1, "a DOCTYPE is not allowed");
}

Test(fmu_describe, a_value_reference_that_is_not_an_unsigned_integer_is_refused) {
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\" valueReference=\"x\"/>\n"
                             "</ModelVariables>\n" TAIL,
                        4, "<Float64 name=\"k\">: valueReference \"x\" is not an unsigned integer");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\" valueReference=\"-1\"/>\n"
                             "</ModelVariables>\n" TAIL,
                        4, "valueReference \"-1\" is not an unsigned integer");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\" valueReference=\"4294967296\"/>"
                             "\n</ModelVariables>\n" TAIL,
                        4, "is not an unsigned integer");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\"/>\n</ModelVariables>\n" TAIL, 4,
                        "<Float64 name=\"k\">: no valueReference");
}

Test(fmu_describe, numbers_are_read_strictly) {
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\" valueReference=\"1\" "
                             "start=\"1.5x\"/>\n</ModelVariables>\n" TAIL,
                        4, "start \"1.5x\" is not a Float64 value");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\" valueReference=\"1\" "
                             "start=\"nan\"/>\n</ModelVariables>\n" TAIL,
                        4, "start \"nan\" is not a Float64 value");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\" valueReference=\"1\" "
                             "start=\"1e999\"/>\n</ModelVariables>\n" TAIL,
                        4, "is not a Float64 value");
    expect_refused_text(HEAD "<ModelVariables>\n<UInt8 name=\"k\" valueReference=\"1\" "
                             "start=\"256\"/>\n</ModelVariables>\n" TAIL,
                        4, "start \"256\" is not a UInt8 value");
    expect_refused_text(HEAD "<ModelVariables>\n<Int32 name=\"k\" valueReference=\"1\" "
                             "start=\"2.5\"/>\n</ModelVariables>\n" TAIL,
                        4, "start \"2.5\" is not a Int32 value");
    expect_refused_text(HEAD "<ModelVariables>\n<Boolean name=\"k\" valueReference=\"1\" "
                             "start=\"yes\"/>\n</ModelVariables>\n" TAIL,
                        4, "start \"yes\" is not a Boolean value");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"v\" valueReference=\"1\" "
                             "start=\"1 2 zz\"/>\n</ModelVariables>\n" TAIL,
                        4, "start \"zz\" is not a Float64 value");
    expect_refused_text("<fmiModelDescription fmiVersion=\"3.0\" modelName=\"m\" "
                        "instantiationToken=\"t\">\n<CoSimulation modelIdentifier=\"m\" "
                        "hasEventMode=\"maybe\"/>" TAIL,
                        2, "<CoSimulation>: hasEventMode \"maybe\" is not true or false");
    expect_refused_text(HEAD "<DefaultExperiment tolerance=\"-1\"/>" TAIL, 3,
                        "<DefaultExperiment>: tolerance \"-1\" is not positive");
    expect_refused_text(HEAD "<DefaultExperiment startTime=\"0x10\"/>" TAIL, 3,
                        "startTime \"0x10\" is not a finite number");
    expect_refused_text(HEAD "<DefaultExperiment startTime=\"1e\"/>" TAIL, 3,
                        "startTime \"1e\" is not a finite number");
    expect_refused_text(HEAD "<DefaultExperiment startTime=\".\"/>" TAIL, 3,
                        "startTime \".\" is not a finite number");
    expect_refused_text(HEAD "<DefaultExperiment stopTime=\" 1\"/>" TAIL, 3,
                        "stopTime \" 1\" is not a finite number");
}

/* xs:double's forms, read the same whatever LC_NUMERIC says */
Test(fmu_describe, reals_take_the_xml_forms_in_any_locale) {
    static const char xml[] =
        HEAD "<DefaultExperiment startTime=\"+.5\" stopTime=\"007.250\" tolerance=\"1E-3\" "
             "stepSize=\"2.\"/>\n" TAIL;
    setlocale(LC_NUMERIC, "de_DE.UTF-8"); /* where installed: a decimal comma */
    fmu_description d;
    char why[512] = "";
    cr_assert_eq(fmu_describe_text(xml, strlen(xml), "md", &d, why, sizeof why), 0, "%s", why);
    cr_assert_eq(d.start_time, 0.5);
    cr_assert_eq(d.stop_time, 7.25);
    cr_assert_eq(d.tolerance, 1e-3);
    cr_assert_eq(d.step_size, 2.0);
    fmu_description_free(&d);
    setlocale(LC_NUMERIC, "C");
}

Test(fmu_describe, an_unknown_causality_or_variability_is_refused) {
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\" valueReference=\"1\" "
                             "causality=\"sideways\"/>\n</ModelVariables>\n" TAIL,
                        4, "causality \"sideways\" is not one of");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\" valueReference=\"1\" "
                             "variability=\"often\"/>\n</ModelVariables>\n" TAIL,
                        4, "variability \"often\" is not one of");
}

Test(fmu_describe, two_variables_with_one_name_or_one_value_reference_are_refused) {
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"k\" valueReference=\"1\"/>\n"
                             "<Int32 name=\"k\" valueReference=\"2\"/>\n</ModelVariables>\n" TAIL,
                        5, "<Int32 name=\"k\">: a variable of that name is on line 4");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"a\" valueReference=\"7\"/>\n"
                             "<Int32 name=\"b\" valueReference=\"7\"/>\n</ModelVariables>\n" TAIL,
                        5, "valueReference 7 is that of \"a\" (line 4) too");
}

Test(fmu_describe, a_dangling_derivative_is_refused) {
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"x\" valueReference=\"1\"/>\n"
                             "<Float64 name=\"der(x)\" valueReference=\"2\" derivative=\"9\"/>\n"
                             "</ModelVariables>\n" TAIL,
                        5, "<Float64 name=\"der(x)\">: derivative \"9\" names no Float variable");
    expect_refused_text(HEAD "<ModelVariables>\n<Int32 name=\"x\" valueReference=\"1\"/>\n"
                             "<Float64 name=\"der(x)\" valueReference=\"2\" derivative=\"1\"/>\n"
                             "</ModelVariables>\n" TAIL,
                        5, "names no Float variable");
}

Test(fmu_describe, a_dangling_model_structure_reference_is_refused) {
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"x\" valueReference=\"1\"/>\n"
                             "</ModelVariables>\n<ModelStructure>\n<Output valueReference=\"5\"/>\n"
                             "</ModelStructure>\n" TAIL,
                        7, "<Output valueReference=\"5\">: no variable has it");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"x\" valueReference=\"1\"/>\n"
                             "</ModelVariables>\n<ModelStructure>\n"
                             "<ContinuousStateDerivative valueReference=\"1\"/>\n"
                             "</ModelStructure>\n" TAIL,
                        7, "\"x\" is not a derivative");
}

Test(fmu_describe, text_that_is_not_xml_or_is_cut_short_is_refused) {
    expect_refused_text("this is not XML", 1, "not well-formed XML");
    expect_refused_text(HEAD "<ModelVariables>\n<Float64 name=\"x\" valueRef", 4,
                        "not well-formed XML");
    expect_refused_text("", 1, "not well-formed XML");
}

Test(fmu_describe, a_wrong_root_or_no_interface_is_refused) {
    expect_refused_text("<?xml version=\"1.0\"?>\n<html/>", 2,
                        "the root element is <html>, not <fmiModelDescription>");
    expect_refused_text("<fmiModelDescription fmiVersion=\"3.0\" modelName=\"m\" "
                        "instantiationToken=\"t\">\n<ScheduledExecution modelIdentifier=\"m\"/>\n" TAIL,
                        1, "neither <ModelExchange> nor <CoSimulation>");
    expect_refused_text("<fmiModelDescription fmiVersion=\"3.0\" modelName=\"m\">" TAIL, 1,
                        "no instantiationToken");
    expect_refused_text(HEAD "<ModelExchange/>" TAIL, 3, "<ModelExchange>: no modelIdentifier");
    expect_refused_text(HEAD "<ModelExchange modelIdentifier=\"../../evil\"/>" TAIL, 3,
                        "modelIdentifier \"../../evil\" is not a C identifier");
    expect_refused_text(HEAD "<CoSimulation modelIdentifier=\"m\"/>" TAIL, 3,
                        "<CoSimulation> appears twice");
}

Test(fmu_describe, elements_nested_too_deep_are_refused) {
    char xml[4096];
    size_t o = (size_t)snprintf(xml, sizeof xml, "%s", HEAD);
    for (int i = 0; i < 70; i++) o += (size_t)snprintf(xml + o, sizeof xml - o, "<a>");
    for (int i = 0; i < 70; i++) o += (size_t)snprintf(xml + o, sizeof xml - o, "</a>");
    snprintf(xml + o, sizeof xml - o, "%s", TAIL);
    expect_refused_text(xml, 3, "nested more than 64 elements deep");
}

Test(fmu_describe, a_file_is_read_and_named_in_messages) {
    char dir[256], path[320], why[512] = "";
    make_temp_dir(dir, sizeof dir, "fmu-describe");
    snprintf(path, sizeof path, "%s/modelDescription.xml", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(full, f);
    fclose(f);
    fmu_description d;
    cr_assert_eq(fmu_describe_file(path, NULL, &d, why, sizeof why), 0, "%s", why);
    cr_assert_eq(d.n_vars, 18);
    fmu_description_free(&d);

    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("<fmiModelDescription fmiVersion=\"2.0\"/>", f);
    fclose(f);
    cr_assert_eq(fmu_describe_file(path, NULL, &d, why, sizeof why), TSR_E_LOAD);
    char at[400];
    snprintf(at, sizeof at, "%s line 1: ", path);
    cr_assert(strstr(why, at), "%s", why);

    snprintf(path, sizeof path, "%s/absent.xml", dir);
    cr_assert_eq(fmu_describe_file(path, NULL, &d, why, sizeof why), TSR_E_LOAD);
    cr_assert(strstr(why, path) && strstr(why, "No such file"), "%s", why);
    remove_tree(dir);
}
